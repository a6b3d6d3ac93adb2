// `tinytrace diff A B`: what changed between two models (any two formats load_model reads), for
// people and CI. Exit status follows diff(1): 0 identical, 1 different (errors: DESIGN.md §1).
// The JSON document (format "tinytrace-diff") is described by lib/emitters/diff.schema.json.
//
// What is compared, and what is deliberately not:
// - ops: the count of each op type over all nodes (nested blocks included). prim.Constant is
//   not counted on its own (a pass may drop or share constants freely); constant values are
//   compared as arguments of the ops that use them (see "structure").
// - modules: per module path, the ops called with it (module()): added, removed, or a changed
//   type/call count/constructor attributes. The `bias` flag is not reported when the bias
//   parameter itself is added/removed (it is the same fact, shown under parameters).
// - parameters and buffers, by state_dict name: added, removed, dtype/shape changed, or values
//   changed (max |Δ|). Values are compared exactly: any difference counts.
// - inputs/outputs: the count, and per position dtype/shape where both sides know them. Names
//   are not compared (renaming a value does not change what a model computes or accepts).
// - structure: when the op counts agree but the graphs still differ in wiring or constant
//   arguments, the first differing node is named.
#pragma once

#include "loaders/loader.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

namespace tt {

constexpr int kDiffVersion = 1;

struct DiffOptions {
  std::string a, b;
  bool json = false;
};

// The JSON document; doc["identical"] says whether anything differs.
nlohmann::ordered_json diff_json(const Model& a, const Model& b);
void print_diff_text(const nlohmann::ordered_json& doc, std::ostream& os);

// The whole command. Returns the exit code: 0 identical, 1 different. Throws tt::Error on errors.
int run_diff(const DiffOptions& opts, std::ostream& out);

}  // namespace tt
