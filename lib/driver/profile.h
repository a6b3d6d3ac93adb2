// `tinytrace profile MODEL --input-shape ...`: runs the IR node by node with the interpreter and
// reports where the time goes — per node and per op type (mean over --runs after --warmup, share
// of the summed node times), the top N nodes — next to the interpreter's whole-run time and, for
// TorchScript input, the original model's time through torch::jit on the same input. The JSON
// document (format "tinytrace-profile") is described by lib/emitters/profile.schema.json.
#pragma once

#include "ir/input_spec.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace tt {

constexpr int kProfileVersion = 1;

struct ProfileOptions {
  std::string model_path;
  std::vector<InputSpec> input_shapes;  // required: one per model input
  int runs = 10;
  int warmup = 2;
  int top = 10;
  bool json = false;
};

// Runs the measurements and returns the JSON document. Throws tt::Error (DESIGN.md §1).
nlohmann::ordered_json profile_json(const ProfileOptions& opts);
void print_profile_text(const nlohmann::ordered_json& doc, std::ostream& os);

void run_profile(const ProfileOptions& opts, std::ostream& out);

}  // namespace tt
