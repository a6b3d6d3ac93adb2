// ONNX loader: reads an ONNX ModelProto (opsets 9-20) into the same IR the TorchScript loader
// produces, so every pass and emitter works on it unchanged. This file is the entry point
// (load_onnx); the importer lives in lib/loaders/onnx/, one file per op family plus one per
// step that is not an op's lifting (the list: lib/loaders/onnx/importer.h).
//
// Note [Lifting ONNX]
// - Only this file and lib/loaders/onnx/ include ONNX/protobuf headers, through
//   lib/loaders/onnx/onnx_proto.h (which defines ONNX_NAMESPACE/ONNX_ML first). Debian's
//   libonnx_proto is the very shared library LibTorch links, so there is one copy of the generated
//   descriptors (no double registration).
// - Initializers (and graph inputs that are initializers, as older exporters write them) and
//   Constant nodes are constant tensors. Nodes whose inputs are all constant and that compute
//   shapes or indices (Shape of a statically shaped value, Gather, Unsqueeze, Concat, Reshape,
//   Cast, Slice, arithmetic, ...) are folded here with ATen, so shape sub-graphs disappear when the
//   shapes are static. With dynamic axes, what cannot be folded becomes Tensor.size and int ops
//   (Note [Dynamic shapes]). ONNX shape inference leaves some shapes open; the loader then asks
//   infer-shapes about the IR lifted so far (Note [Shapes ONNX inference leaves open]).
// - Parametric layers with constant weights become module ops (nn.Conv2d, nn.Linear,
//   nn.BatchNorm2d, ...) whose module path comes from the weight's name ("layer1.0.conv1.weight"
//   -> "layer1.0.conv1") or else from the exporter's node name ("/layer1/layer1.0/conv1/Conv"
//   -> "layer1.0.conv1"); their weights are stored as "<module>.<key>" so the generated module's
//   state_dict loads NAME.pth. Other initializers keep their (sanitized, dotted) ONNX names and
//   are read with prim.GetAttr.
// - Everything else becomes the function op the TorchScript loader would produce for the same
//   PyTorch code (F.relu, torch.cat, Tensor.reshape, ...), with every ATen argument as a
//   constant. A Mul is torch.mul even when it ends x*Sigmoid(x), x*HardSigmoid(x) or the Erf
//   form of GELU, as the exporter writes F.silu, F.hardswish and F.gelu at opset 13: the import
//   pipeline (kOnnxImportPipeline below, Note [Import pipeline] in lib/loaders/loader.h) fuses them
//   (passes/fuse_activations.cpp), then drops the nodes and weights nothing reads any more
//   (dce, prune-weights).
// - Gather of run-time ids from a 2-d float initializer (axis 0) is nn.Embedding; conv/pool
//   padding that PyTorch cannot express (auto_pad=SAME_*, asymmetric pads) becomes the op's
//   symmetric part plus an F.pad of the excess before it.
// - ONNX has no num_batches_tracked: BatchNorm gets a fresh int64 0 buffer (what a newly built
//   nn.BatchNorm holds; it only matters for training with momentum=None) and a note says so.
// - An op without a mapping throws Unsupported naming the op type and the node; a file that is
//   not a ModelProto throws BadInput.
// - Each node is lifted in file order (Importer::lift): a Constant; else folded when its inputs
//   are all constant (onnx/fold_constants.cpp); else a shape computation on run-time sizes
//   (onnx/dynamic_shapes.cpp); else by the handler the op table (onnx/ops.cpp) has for its type.
#include "loaders/onnx/importer.h"

#include "loaders/loader.h"

#if TT_HAVE_ONNX
#include <onnx/shape_inference/implementation.h>
#endif

#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace tt {

// What the ONNX loader asks to run on the graph it lifted (Note [Import pipeline]): the exporter's
// activation patterns fused (Note [Fusing the ONNX exporter's activations] in
// passes/fuse_activations.cpp), then the nodes nothing reads and the weights only they read
// dropped, back to front. (dce keeps nodes with side effects and walks nested blocks; a lifted
// ONNX graph has neither, so it drops what the loader's own sweep dropped, in the same order.)
const char* const kOnnxImportPipeline = "fuse-activations,dce,prune-weights";

#if !TT_HAVE_ONNX

std::unique_ptr<Graph> load_onnx(const std::string&, Diagnostics&) {
  throw Error(ExitCode::Unsupported,
              "this tinytrace was built without ONNX support — install libonnx-dev and rebuild");
}

#else

namespace {

// Note [Guarding ONNX shape inference]
// libonnx's shape inference trusts what the checker does not check: a Conv or pooling node whose
// input rank disagrees with its weight or with its pads/strides/kernel_shape makes
// convPoolShapeInference index past a repeated field, and libonnx 1.17 crashes (SIGSEGV after
// protobuf's CHECK; found by fuzz_onnx, regression input testdata/fuzz/onnx/crash-conv-rank.onnx).
// Such a node is malformed ONNX (X and W have the same rank >= 3; each spatial attribute has one
// entry per spatial axis, pads two), so the file is refused as bad input before inference runs.
void check_node_ranks(const ::onnx::NodeProto& n, int r,
                      const std::map<std::string, std::vector<int> >& ranks) {
  using namespace onnx_import;
  auto refuse = [&](const std::string& what) {
    bad("node " + n.op_type() + " '" + n.name() + "': " + what +
        " — the ONNX file is malformed; re-export the model with torch.onnx.export");
  };
  if (r < 3) refuse("input '" + n.input(0) + "' has rank " + std::to_string(r) + ", not >= 3");
  // The weight: input 1 (Conv, ConvTranspose, ConvInteger) or 3 (QLinearConv).
  int w = n.op_type() == "QLinearConv" ? 3 : n.op_type().rfind("Conv", 0) == 0 ? 1 : -1;
  if (w >= 0 && w < n.input_size()) {
    auto wr = ranks.find(n.input(w));
    if (wr != ranks.end())
      for (const int k : wr->second)
        if (k != r)
          refuse("weight '" + n.input(w) + "' has rank " + std::to_string(k) +
                 " but the input has rank " + std::to_string(r));
  }
  for (const auto& a : n.attribute()) {
    size_t want = a.name() == "pads" ? 2 * size_t(r - 2)
                  : (a.name() == "kernel_shape" || a.name() == "strides" ||
                     a.name() == "dilations" || a.name() == "output_padding")
                      ? size_t(r - 2)
                      : 0;
    if (want && a.ints_size() != 0 && size_t(a.ints_size()) != want)
      refuse(a.name() + " has " + std::to_string(a.ints_size()) + " entries for " +
             std::to_string(r - 2) + " spatial axes");
  }
}

void check_conv_pool_ranks(const ::onnx::GraphProto& g) {
  using namespace onnx_import;
  // Every rank the file declares for a name: inference also takes the graph outputs' declared
  // types (a graph output named like a Conv's input, with rank 2, crashed it the same way).
  std::map<std::string, std::vector<int> > ranks;
  auto note = [&](const ox::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()].push_back(v.type().tensor_type().shape().dim_size());
  };
  for (const auto& v : g.input()) note(v);
  for (const auto& v : g.value_info()) note(v);
  for (const auto& v : g.output()) note(v);
  for (const auto& t : g.initializer()) ranks[t.name()].push_back(t.dims_size());
  static const std::set<std::string> conv_pool = {
      "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool"};
  for (const auto& n : g.node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (!conv_pool.count(n.op_type()) || n.input_size() == 0) continue;
    auto it = ranks.find(n.input(0));
    if (it == ranks.end()) continue;
    for (const int r : it->second) check_node_ranks(n, r, ranks);
  }
}

}  // namespace

std::unique_ptr<Graph> load_onnx(const std::string& path, Diagnostics& diags) {
  using namespace onnx_import;
  std::string bytes = read_file(path);
  ox::ModelProto model;
  if (!model.ParseFromString(bytes))
    bad("not a valid ONNX file (the protobuf does not parse: truncated or corrupt) — re-export the "
        "model "
        "with torch.onnx.export");
  if (!model.has_graph() || model.ir_version() <= 0 || model.graph().node_size() == 0)
    bad("the protobuf is not an ONNX ModelProto (no ir_version or no graph) — pass the .onnx model "
        "file itself");
  int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset != 0 && (opset < 7 || opset > 20))
    throw Error(ExitCode::Unsupported, "ONNX opset " + std::to_string(opset) +
                                           " is outside the supported range 9-20 — re-export with "
                                           "opset_version=17");
  // Fills value_info for every intermediate the exporter left untyped (ranks pick BatchNorm1d vs
  // 2d, static shapes fold Shape sub-graphs). Best effort: a model ONNX cannot infer still loads.
  check_conv_pool_ranks(model.graph());  // Note [Guarding ONNX shape inference]
  try {
    ox::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    diags.add({Severity::Note, "onnx-shape-inference",
               std::string("ONNX shape inference failed (") + first_line(e.what()) +
                   "); shapes come from the file only",
               "", "", ""});
  }
  try {
    Importer imp(model, path, diags);
    auto g = imp.run();
    if (g->name().empty() || g->name() == "torch_jit" || g->name() == "main_graph") {
      std::string base =
          path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
      if (base.size() > 5 && base.compare(base.size() - 5, 5, ".onnx") == 0)
        base.resize(base.size() - 5);
      g->set_name(sanitize_name(base));
    }
    return g;
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    msg = msg.substr(0, msg.find('\n'));
    throw Error(ExitCode::BadInput, "the ONNX model is inconsistent (" + msg + ") — re-export it");
  } catch (const std::exception& e) {
    throw Error(ExitCode::BadInput,
                std::string("the ONNX model could not be read (") + e.what() + ") — re-export it");
  }
}

#endif  // TT_HAVE_ONNX

}  // namespace tt
