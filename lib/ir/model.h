// The Model bundle every command works on: the graph, where it came from, and its diagnostics.
#pragma once

#include "ir/ir.h"
#include "support/diag.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tt {

struct SourceInfo {
  std::string path;    // as given on the command line
  std::string format;  // "torchscript" | "export" | "onnx" | "tir"
  std::string sha256;  // of the file's bytes
};

struct Model {
  std::unique_ptr<Graph> graph;
  SourceInfo source;
  Diagnostics diags;  // warnings from loading (and later from passes)
  // TorchScript: (IR value name as loaded, debug name of the value of the archive's forward graph
  // it was lifted from), for the tensors of that graph's top block; where --verify finds the
  // first value the conversion changed.
  std::vector<std::pair<std::string, std::string>> source_values;
};

}  // namespace tt
