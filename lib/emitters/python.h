// Python emitter: a standalone PyTorch module (DESIGN.md §2).
#pragma once

#include "ir/ir.h"
#include "ir/model.h"
#include "support/diag.h"
#include "ir/input_spec.h"
#include "exec/alias.h"

#include <future>
#include <string>
#include <vector>

namespace tt {

struct PythonEmitOptions {
  std::string class_name;    // "Resnet18"
  std::string weights_file;  // "resnet18.pth" (loaded from beside the .py in __main__)
  // Example inputs for the __main__ block; when empty and the graph inputs have complete types,
  // those are used; otherwise __main__ only loads the weights and says how to get examples.
  std::vector<InputSpec> example_inputs;
  // One class with one forward (the layout before issue #14) instead of one class per module
  // type (Note [Classes of the generated module] in lib/emitters/python/classes.cpp).
  bool flat = false;
  // The op libraries loaded when the model was read (Note [Op libraries] in ir/model.h): an op
  // of one of their namespaces makes the code import the library's package, or load the library.
  std::vector<OpLibrary> op_libraries;
  // The quantized engine the model was converted with (exec/quant_engine.h): __main__ selects it
  // when the model holds quantized modules.
  std::string quantized_engine;
  // The graph's mutated memory (exec/alias.h) when the caller has it worked out elsewhere (on the
  // second core: Note [Emitters in parallel] in lib/driver/convert.cpp); computed here when not
  // valid. It must be of this graph as it is now.
  std::shared_future<MutatedMemory> mutated_memory;
};

std::string emit_python(const Graph& g, const PythonEmitOptions& opts, Diagnostics& diags);

}  // namespace tt
