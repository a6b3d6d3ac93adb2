// --verify: run the original model and the transformed IR on the same seeded inputs and compare
// every output (DESIGN.md §1: exit 5 beyond tolerance).
#pragma once

#include "ir/ir.h"
#include "loaders/loader.h"
#include "ir/input_spec.h"

#include <ATen/core/ivalue.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tt {

// Seeded example inputs (float: standard normal; integer: uniform in [0, 10); bool: 0/1), the
// same for the same specs and seed whatever else ran before.
std::vector<c10::IValue> make_example_inputs(const std::vector<InputSpec>& specs,
                                             uint64_t seed = 0);

// The specs of a graph's inputs before the first with a default (those have complete tensor
// types); empty when any of them is unknown.
std::vector<InputSpec> specs_from_graph(const Graph& g);
// Appends the defaults of the graph inputs `inputs` leaves out at the end (Note [Forward
// defaults] in ir/ir.h); a left-out input without a default is a usage error.
void add_default_inputs(const Graph& g, std::vector<c10::IValue>& inputs);

struct OutputDiff {
  std::string path;  // "0", "1.0" for nested tuples
  std::vector<int64_t> shape;
  double max_abs = 0, max_expected = 0, rel = 0;
  double cosine = 1;  // cosine similarity of the flattened outputs (1 for equal ones)
  bool shape_mismatch = false;
};

struct VerifyResult {
  std::string engine;  // "interpreter", "torchscript"
  std::vector<OutputDiff> outputs;
  double tolerance = 0;
  // When > 0, an output passes by its cosine similarity (>= min_cosine) instead of its relative
  // difference: a model that approximates the original (--dequantize; Note [Verifying a
  // dequantized model] in lib/driver/convert.cpp).
  double min_cosine = 0;
  double max_rel = 0;
  bool structure_mismatch = false;  // different number / nesting of outputs
  bool passed() const;
  nlohmann::json to_json() const;
  std::string summary() const;  // one line
};

// Compares `actual` with `expected` (tensors, tuples and lists of them, scalars).
VerifyResult compare_outputs(const c10::IValue& expected, const c10::IValue& actual,
                             double tolerance, const std::string& engine);

// A copy of each tensor input: every run gets its own, since a model may modify its inputs.
std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs);

// The first value of `g`, in program order, whose same-named value in `ref` (the graph before the
// passes) differs beyond `tolerance` on `inputs`: where a pass changed what the model computes.
// Values are compared as they are right after the node that computes them (copies are kept, as
// later in-place writes change tensors). nullopt when no named value differs (or a run fails).
struct ValueDifference {
  std::string value, op, module, scope, loc;
  double max_abs = 0, rel = 0;
  std::string str() const;  // "%name (op, in module 'scope', at file:line): max |diff| ..."
};
std::optional<ValueDifference> first_difference(const Graph& ref, const Graph& g,
                                                const std::vector<c10::IValue>& inputs,
                                                double tolerance);

// The first value of the graph as loaded from a TorchScript archive, in the order of the archive's
// forward graph, that differs beyond `tolerance` from the value it was lifted from
// (Model::source_values; run through torch::jit): where the conversion changed what the model
// computes. nullopt when none is found (or a run fails).
std::optional<ValueDifference> first_difference_from_original(
    const Model& loaded, const std::vector<c10::IValue>& inputs, double tolerance);

// Runs a TorchScript archive (e.g. the NAME.pt of --emit torchscript) on `inputs` with
// torch::jit and compares its outputs with `expected` (engine "torchscript"). Throws tt::Error
// like run_torchscript_file when the archive cannot be loaded or run.
VerifyResult verify_torchscript_archive(const std::string& path,
                                        const std::vector<c10::IValue>& inputs,
                                        const c10::IValue& expected, double tolerance);

}  // namespace tt
