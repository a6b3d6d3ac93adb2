// Loading models: format detection and the Model bundle every command works on.
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
  std::string format;  // "torchscript" | "onnx" | "tir"
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

// Detects the format from the content (zip magic -> TorchScript, ONNX protobuf, .tir text) and
// loads it. Throws tt::Error (BadInput / Unsupported) with a one-line message on bad input.
Model load_model(const std::string& path);

// "torchscript", "onnx", "tir", or "" when not recognised. Throws BadInput when unreadable.
std::string detect_format(const std::string& path);

// The TorchScript loader (lib/loaders/torchscript.cpp; the only TU with JIT headers besides
// torch_io.cpp). Throws tt::Error; adds warnings to diags.
std::unique_ptr<Graph> load_torchscript(const std::string& path, Diagnostics& diags,
                                        std::vector<std::pair<std::string, std::string>>* source_values = nullptr);

// The ONNX loader (lib/loaders/onnx.cpp; the only TU with ONNX/protobuf headers). Throws
// tt::Error (BadInput for malformed files, Unsupported for ops without a mapping).
std::unique_ptr<Graph> load_onnx(const std::string& path, Diagnostics& diags);

}  // namespace tt
