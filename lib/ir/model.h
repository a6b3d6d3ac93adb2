// The Model bundle every command works on: the graph, where it came from, and its diagnostics.
#pragma once

#include "ir/ir.h"
#include "support/diag.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tt {

// Note [Op libraries]
// A TorchScript archive may call ops that a shared library registers with LibTorch
// (torchvision::nms, torchaudio::..., a project's own TORCH_LIBRARY): LibTorch cannot load the
// archive until that library is loaded (Python's torch.ops.load_library, or importing the package
// that loads it). The user names libraries with --load-library; the libraries of Debian's Python
// packages (torchvision, torchaudio) are found and loaded when an archive needs one
// (lib/loaders/op_library.cpp). Loading is process-wide (dlopen), so every later load, the
// interpreter and --verify see the ops. The report lists the libraries, and the generated Python
// registers the same ops the way Python code does: `import torchvision` for a package's library,
// else torch.ops.load_library(path).
struct OpLibrary {
  std::string path;                     // the shared library as loaded
  std::string reason;                   // "--load-library", "the model calls torchvision::nms"
  std::vector<std::string> namespaces;  // the op namespaces it registered ("torchvision")
  std::string package;  // the Python package whose import registers them ("torchvision"), or ""
};

struct SourceInfo {
  std::string path;    // as given on the command line
  std::string format;  // "torchscript" | "export" | "onnx" | "tir"
  std::string sha256;  // of the file's bytes
  // The op libraries loaded in this process when the model was read (Note [Op libraries]).
  std::vector<OpLibrary> op_libraries;
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
