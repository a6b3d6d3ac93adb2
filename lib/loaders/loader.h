// Loading models: format detection and the Model bundle every command works on.
#pragma once

#include "ir/ir.h"
#include "ir/model.h"
#include "support/diag.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace tt {

// Detects the format from the content (zip magic -> TorchScript, ONNX protobuf, .tir text) and
// loads it: the format's loader, then its import pipeline (Note [Import pipeline]). Throws
// tt::Error (BadInput / Unsupported) with a one-line message on bad input.
Model load_model(const std::string& path);

// Work the loaders do that should not grow with the number of module instances, counted for the
// complexity tests (tests/unit/test_torchscript_loader.cpp): scripted method graphs prepared
// (copied, inlined, folded; Note [Sharing prepared graphs] in torchscript/lifter_scripted.cpp).
struct LoaderOpCounts {
  uint64_t scripted_graphs_prepared = 0;
};
LoaderOpCounts& loader_op_counts();

// Note [Import pipeline]
// A loader only lifts: it turns the file into the IR op by op. What makes the lifted graph read
// like PyTorch code beyond that (fusing the activations an exporter spelled out, dropping what
// nothing reads any more) is a pass, and the passes a loader asks for are its import pipeline:
// pipeline text (passes/pass_manager.h, Note [Pipeline text]) that load_model runs on the graph
// right after the loader, before any command sees it, so convert, inspect, diff, profile and
// verify all start from the same graph. It runs outside the user's pipeline
// (run_import_pipeline): the report, --print-ir-after, --verify-each and the statistics show only
// the user's passes. A pass written for an import pipeline is a TT_IMPORT_PASS in
// passes/passes.def. ONNX's and TorchScript's (also run for .pt2, which is lifted as TorchScript)
// are below; .tir has none (it is read as written).
extern const char* const kOnnxImportPipeline;
extern const char* const kTorchScriptImportPipeline;

// Loads a shared library that registers TorchScript ops (what torch.ops.load_library does in
// Python), so that archives calling them load (Note [Op libraries] in ir/model.h); `reason` is
// what the report says about it. Loading one path twice loads it once. Throws BadInput naming the
// library and the system's reason when it cannot be loaded.
OpLibrary load_op_library(const std::string& path, const std::string& reason = "--load-library");
// Every op library loaded so far, in load order.
std::vector<OpLibrary> loaded_op_libraries();
// The library of a Python package that registers the ops of namespace `ns` (torchvision's
// _C*.so for "torchvision"), found in the directories Python imports packages from; "" when `ns`
// is not a known package's or the package is not installed.
std::string find_op_library(const std::string& ns);

// "torchscript", "export" (a torch.export .pt2 archive), "onnx", "tir", or "" when not
// recognised. Throws BadInput when unreadable.
std::string detect_format(const std::string& path);

// The TorchScript loader (lib/loaders/torchscript/: load.cpp, the lifter and the leaf recipes).
// Fills the graph's module table from the module tree. Throws tt::Error; adds warnings to diags.
std::unique_ptr<Graph> load_torchscript(
    const std::string& path, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values = nullptr);

// Lifts an in-memory TorchScript module like load_torchscript lifts a loaded one (the torch.export
// loader builds one), without a module table. Throws tt::Error or LibTorch's exceptions.
std::unique_ptr<Graph> lift_jit_module(
    const torch::jit::Module& module, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values = nullptr);

// The torch.export loader (lib/loaders/export/): a .pt2 archive of torch 2.6's
// torch.export.save, turned into the module torch.jit.trace would give and lifted with
// lift_jit_module; source_values as for TorchScript; the module table holds the classes the
// nodes' nn_module_stack names. Throws tt::Error (BadInput for malformed
// archives, Unsupported for ops and constructs without a mapping or another archive layout).
std::unique_ptr<Graph> load_export(
    const std::string& path, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values = nullptr);

// Zip archives as torch.save and torch.export.save write them (lib/loaders/loader.cpp): the
// central directory is read once; `names` lists every entry, `data` holds the bytes of the entries
// `want` selects and `ranges` where in the file those `locate` selects are (offset and size of
// their bytes; for entries too big to read whole). ZIP64 archives are read (Note [ZIP64] in
// loader.cpp). Throws BadInput when the archive is truncated or corrupt, or a wanted or located
// entry is compressed or cut short.
struct ZipContents {
  std::vector<std::string> names;
  std::map<std::string, std::string> data;
  std::map<std::string, std::pair<uint64_t, uint64_t>> ranges;
};
ZipContents read_zip(const std::string& path, const std::function<bool(const std::string&)>& want,
                     const std::function<bool(const std::string&)>& locate = nullptr);

// The stored entries of the zip at [offset, offset + size) of the file at `path`: where each one's
// bytes start (from `offset`), their size and their CRC-32 as the central directory says (ZIP64
// too). Empty when the zip cannot be read.
struct ZipRecord {
  std::string name;
  uint64_t data_offset = 0, size = 0;
  uint32_t crc = 0;
};
std::vector<ZipRecord> zip_records(const std::string& path, uint64_t offset, uint64_t size);

// The ONNX loader (lib/loaders/onnx.cpp and lib/loaders/onnx/; only those TUs include the
// ONNX/protobuf headers, through lib/loaders/onnx/onnx_proto.h). Throws
// tt::Error (BadInput for malformed files, Unsupported for ops without a mapping).
std::unique_ptr<Graph> load_onnx(const std::string& path, Diagnostics& diags);

}  // namespace tt
