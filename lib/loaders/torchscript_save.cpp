// `--emit torchscript`, the saving half: forward's source (made by lib/emitters/torchscript.h)
// compiled with torch::jit::Module::define into a module tree that holds the weights (one
// submodule per state_dict prefix: "layer1.0.conv1.weight" -> module layer1, child "0", child
// "conv1", parameter "weight", so state_dict keys equal NAME.pth's), and saved as an archive.
#include "loaders/torchscript_save.h"

#include "ir/named_tuples.h"
#include "support/diag.h"
#include "support/output_set.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/passes/frozen_conv_add_relu_fusion.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>
#include <torch/csrc/jit/passes/shape_analysis.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <map>
#include <memory>

namespace tt {

std::vector<c10::FunctionSchema> jit_operator_schemas(const std::string& qualified_name) {
  std::vector<c10::FunctionSchema> out;
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(qualified_name)))
    out.push_back(op->schema());
  return out;
}

namespace {

// `ops.<ns>.<name>`: the op <ns>::<name> of a custom library (what archives' code calls
// torch.ops.<ns>.<name>).
struct OpsNamespaces : torch::jit::SugaredValue {
  std::string kind() const override { return "ops"; }
  std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange&,
                                                 torch::jit::GraphFunction&,
                                                 const std::string& ns) override {
    return std::make_shared<torch::jit::BuiltinModule>(ns);
  }
};

// The TorchScript type of an IR type, as the source spells it (ts_type in
// emitters/torchscript.cpp); NamedTuples from `named`.
c10::TypePtr jit_type(const Type& t, const std::map<std::string, c10::TupleTypePtr>& named) {
  using K = Type::Kind;
  auto elem = [&](size_t i) {
    return i < t.elems.size() ? jit_type(t.elems[i], named) : c10::TensorType::get();
  };
  switch (t.kind) {
    case K::Int:
    case K::ScalarType:
    case K::Layout:
    case K::MemoryFormat:
      return c10::IntType::get();
    case K::Float:
      return c10::FloatType::get();
    case K::Bool:
      return c10::BoolType::get();
    case K::Str:
      return c10::StringType::get();
    case K::None:
      return c10::NoneType::get();
    case K::Device:
      return c10::DeviceObjType::get();
    case K::List:
      return c10::ListType::create(elem(0));
    case K::Optional:
      return c10::OptionalType::create(elem(0));
    case K::Dict:
      return c10::DictType::create(t.elems.empty() ? c10::StringType::get() : elem(0), elem(1));
    case K::Tuple: {
      if (t.is_named_tuple()) return named.at(t.name);
      std::vector<c10::TypePtr> e;
      for (size_t i = 0; i < t.elems.size(); ++i) e.push_back(elem(i));
      return c10::TupleType::create(std::move(e));
    }
    default:
      return c10::TensorType::get();
  }
}

// Module::define's default resolver knows only `torch`; the generated source also uses the
// special form `annotate`, `ops` (as the TorchScript importer does) and the graph's NamedTuple
// classes (Note [NamedTuples in TorchScript] in emitters/torchscript.cpp).
struct SourceResolver : torch::jit::NativeResolver {
  std::map<std::string, c10::TupleTypePtr> named_tuples;  // by source name
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(
      const std::string& name, torch::jit::GraphFunction& m,
      const torch::jit::SourceRange& loc) override {
    if (name == "annotate") return torch::jit::SpecialFormValue::create(c10::prim::annotate);
    if (name == "ops") return std::make_shared<OpsNamespaces>();
    if (auto it = named_tuples.find(name); it != named_tuples.end())
      return std::make_shared<torch::jit::NamedTupleConstructor>(it->second);
    return NativeResolver::resolveValue(name, m, loc);
  }
  c10::TypePtr resolveType(const std::string& name, const torch::jit::SourceRange& loc) override {
    if (auto it = named_tuples.find(name); it != named_tuples.end()) return it->second;
    return NativeResolver::resolveType(name, loc);
  }
};

// The resolver of the forward of `g`, with its NamedTuple classes created (with the original
// qualified names, fields and field types) and registered in `cu`, so that the archive defines
// them.
std::shared_ptr<SourceResolver> source_resolver(
    const Graph& g, const std::shared_ptr<torch::jit::CompilationUnit>& cu) {
  auto r = std::make_shared<SourceResolver>();
  std::map<std::string, c10::TupleTypePtr> by_name;
  for (const Type& t : named_tuple_types(g)) {
    std::vector<c10::TypePtr> types;
    for (const Type& e : t.elems) types.push_back(jit_type(e, by_name));
    c10::TupleTypePtr tt = c10::TupleType::createNamed(c10::QualifiedName(t.name), t.fields, types);
    cu->register_type(tt);
    by_name[t.name] = tt;
    r->named_tuples[torchscript_named_tuple_name(t.name)] = tt;
  }
  return r;
}

// The module tree that holds the weights: one node per state_dict prefix.
struct ModTree {
  std::vector<std::pair<std::string, Weight>> params, buffers;
  std::vector<std::string> order;  // children in first-seen (state_dict) order
  std::map<std::string, std::unique_ptr<ModTree>> children;
};

std::string class_atom(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "M" + out;
  return out;
}

torch::jit::Module build_module(const ModTree& t, const std::string& qualified,
                                const std::shared_ptr<torch::jit::CompilationUnit>& cu,
                                const std::string& prefix) {
  torch::jit::Module m(c10::QualifiedName(qualified), cu, /*shouldMangle=*/true);
  m.register_attribute("training", c10::BoolType::get(), false);
  for (const auto& [name, w] : t.params) {
    at::Tensor x = w.tensor.detach();
    if (x.is_floating_point() || x.is_complex()) x.requires_grad_(true);
    m.register_parameter(name, x, /*is_buffer=*/false);
  }
  for (const auto& [name, w] : t.buffers) m.register_buffer(name, w.tensor.detach());
  for (const auto& name : t.order) {
    std::string path = prefix.empty() ? name : prefix + "." + name;
    std::string q = qualified.substr(0, qualified.rfind('.')) + "." + class_atom("m_" + path);
    m.register_module(name, build_module(*t.children.at(name), q, cu, path));
  }
  return m;
}

// Note [Optimizing NAME.pt for inference]
// --optimize-for-inference saves NAME.pt frozen and optimized by LibTorch's own passes, the ones
// torch::jit::optimize_for_inference runs (torch/csrc/jit/api/module.cpp), but one:
//  - torch::jit::freeze(module, {}, optimize_numerics=true): parameters and attributes become
//    constants of the inlined forward, then OptimizeFrozenGraph: dropout removed, BatchNorm and
//    constant add/sub/mul/div folded into the preceding conv, BatchNorm into linear, linears on
//    one input concatenated;
//  - FuseFrozenConvAddRelu (a no-op unless LibTorch was built with CUDA/cuDNN), then
//    FrozenLinearTranspose (linear as matmul with the weight transposed once).
// Left out: ConvertFrozenOpsToMKLDNN. Its graphs hold MKLDNN tensors as prim::ConstantMKLDNNTensor
// nodes that TorchScript's serializer cannot round-trip (torch.jit.load of the saved file fails
// with "required keyword attribute 'value' is undefined", pytorch issue 81085; LibTorch documents
// that serialization after optimize_for_inference "is not implemented"), and on Debian's
// LibTorch 2.6 they also fail at run time outside inference mode (max_pool2d on an MKLDNN
// tensor). A NAME.pt that does not load is worse than a slower one.
// Freezing drops the module tree: NAME.pt then has no state_dict (NAME.pth still holds the
// weights). The folds reassociate float arithmetic like fold-batchnorm does, so --verify compares
// the optimized NAME.pt with the original at 1e-3 when they changed the graph's arithmetic
// (InferenceOptimization::reassociated), as DESIGN.md §2 allows for BatchNorm folding.

// The method of NAME.pt that runs a prepacked conv (Note [Prepacked convolutions in NAME.pt]).
constexpr const char* kPrepackedConv = "_conv2d_prepacked";

std::map<std::string, int64_t> aten_histogram(const torch::jit::Block* b) {
  std::map<std::string, int64_t> out;
  for (const torch::jit::Node* n : b->nodes()) {
    if (n->kind().is_aten()) ++out[n->kind().toQualString()];
    if (n->kind() == c10::prim::CallMethod && n->s(c10::attr::name) == kPrepackedConv)
      ++out["mkldnn_prepacked::conv2d_run"];  // Note [Prepacked convolutions in NAME.pt]
    for (const torch::jit::Block* sub : n->blocks())
      for (const auto& [k, c] : aten_histogram(sub)) out[k] += c;
  }
  return out;
}

// Note [Prepacked convolutions in NAME.pt]
// What makes LibTorch's in-memory optimize_for_inference fast on CPU is oneDNN (MKLDNN) running
// every conv with its weight already in oneDNN's blocked layout; an aten::conv2d reorders its
// weight on every call (for resnet50 about 100 MB read and written per forward) and at batch 1
// sends small 1x1 convs to the slow im2col path. MKLDNN tensors cannot be saved (Note
// [Optimizing NAME.pt for inference]), but LibTorch's prepacked conv can be rebuilt at load:
// mkldnn_prepacked::conv2d_prepack makes a __torch__.torch.classes.mkldnn.ConvOpContext (the
// weight in oneDNN's layout) and mkldnn_prepacked::conv2d_run runs it. So after freezing, each
// aten::conv2d of a constant float32 4-d weight (and constant bias, stride, padding, dilation,
// groups) becomes a call self._conv2d_prepacked(x, i) of a method that runs
// conv2d_run(x, self._prepacked[i]), and the module gets a __getstate__ that saves the dense
// weights and arguments and a __setstate__ that packs them again when the archive is loaded (as
// torch.ao's quantized modules do). The context's own pickling cannot be used: LibTorch 2.6's
// ConvOpContext.__getstate__ drops its fusion attribute ('' for 'none'), and loading then fails
// with "Fusion behavior undefined".
// conv2d_run is not aten::conv2d: it fails on an unbatched C×H×W input, computes on a float16
// input (that aten::conv2d refuses against a float32 weight), has no autograd formula (the input
// gets no gradient through it, with a mere warning) and is CPU-only. So the method runs
// conv2d_run only for a 4-d input of the weight's dtype (float32), device (CPU) and layout
// (strided) with the conv's channel count, outside autograd; any other input goes to
// aten::conv2d of the same dense weight
// and arguments, which is what the frozen graph ran before the rewrite: NAME.pt accepts,
// computes and refuses what the original does. The checks are a few interpreter instructions per
// conv (not measurable on resnet50); the graph executor inlines the method when it optimizes the
// forward, as it inlines every call.
// Not done: folding a ReLU that is a conv's only use into it (conv2d_prepack's "relu" post-op,
// bit-identical): measured on resnet50's conv shapes it saved about 1% of the convs' time, below
// the noise of a whole forward.
// It stays shape-general: conv2d_run computes its output size from the input it gets, and when
// the input size differs from the one the weight was packed for, oneDNN reorders the weight for
// that call (the plain conv's cost, same result). The packing size is the conv's input size when
// LibTorch's shape propagation knows it from the IR's input shapes (--input-shape), else a
// nominal 1xCx32x32. Only when LibTorch has MKLDNN and registers the ops, and the frozen module
// holds no attributes (freezing leaves none, not even `training`, unless it must keep one: then
// its state would need saving too); otherwise NAME.pt keeps aten::conv2d. The arithmetic is
// oneDNN's, as that of aten::conv2d on CPU; a rewritten conv counts as reassociated (--verify's
// 1e-3, as for the other folds).
int64_t prepack_convolutions(torch::jit::Module& frozen,
                             const std::vector<std::optional<std::vector<int64_t>>>& shapes) {
  auto handle = c10::Dispatcher::singleton().findSchema({"mkldnn_prepacked::conv2d_prepack", ""});
  if (!at::hasMKLDNN() || !handle) return 0;
  if (frozen.named_attributes(/*recurse=*/false).size() != 0) return 0;
  std::shared_ptr<torch::jit::Graph> graph = frozen.get_method("forward").graph();
  const c10::Symbol conv = c10::Symbol::fromQualString("aten::conv2d");
  std::function<void(torch::jit::Block*, std::vector<torch::jit::Node*>&)> collect =
      [&](torch::jit::Block* b, std::vector<torch::jit::Node*>& out) {
        for (torch::jit::Node* n : b->nodes()) {
          if (n->kind() == conv && n->inputs().size() == 7) out.push_back(n);
          for (torch::jit::Block* sub : n->blocks()) collect(sub, out);
        }
      };
  std::vector<torch::jit::Node*> convs;
  collect(graph->block(), convs);
  if (convs.empty()) return 0;
  // The input size of each conv, from a copy of the graph whose inputs have the IR's shapes.
  std::map<torch::jit::Node*, std::vector<int64_t>> known;
  try {
    std::shared_ptr<torch::jit::Graph> copy = graph->copy();
    bool complete = copy->inputs().size() == shapes.size() + 1;
    for (size_t i = 0; complete && i < shapes.size(); ++i) {
      if (!shapes[i] || std::find(shapes[i]->begin(), shapes[i]->end(), -1) != shapes[i]->end())
        complete = false;
      else
        copy->inputs()[i + 1]->setType(c10::TensorType::create(at::zeros(*shapes[i])));
    }
    std::vector<torch::jit::Node*> copied;
    if (complete) {
      torch::jit::PropagateInputShapes(copy);
      collect(copy->block(), copied);
    }
    for (size_t i = 0; i < convs.size() && copied.size() == convs.size(); ++i)
      if (auto t = copied[i]->input(0)->type()->cast<c10::TensorType>())
        if (auto sizes = t->sizes().concrete_sizes(); sizes && sizes->size() == 4)
          known[convs[i]] = *sizes;
  } catch (const std::exception&) {
    known.clear();  // shape propagation is only a hint for the weight layout
  }
  c10::List<at::Tensor> weights;
  c10::List<std::optional<at::Tensor>> biases;
  c10::List<std::vector<int64_t>> args;  // stride, padding, dilation, groups, input size
  std::vector<c10::IValue> contexts;
  std::vector<torch::jit::Node*> rewritten;
  for (torch::jit::Node* n : convs) {
    std::optional<c10::IValue> w = torch::jit::toIValue(n->input(1));
    std::optional<c10::IValue> b = torch::jit::toIValue(n->input(2));
    std::vector<std::optional<c10::IValue>> a;
    for (size_t i = 3; i < 7; ++i) a.push_back(torch::jit::toIValue(n->input(i)));
    if (!w || !w->isTensor() || !b || !(b->isNone() || b->isTensor())) continue;
    if (std::any_of(a.begin(), a.end(), [](const auto& v) { return !v; })) continue;
    if (!a[0]->isIntList() || !a[1]->isIntList() || !a[2]->isIntList() || !a[3]->isInt()) continue;
    at::Tensor weight = w->toTensor().detach();
    if (weight.dim() != 4 || weight.scalar_type() != at::kFloat || !weight.device().is_cpu() ||
        weight.layout() != at::kStrided)
      continue;
    std::optional<at::Tensor> bias;
    if (b->isTensor()) {
      bias = b->toTensor().detach();
      if (bias->scalar_type() != at::kFloat || !bias->device().is_cpu() || bias->dim() != 1 ||
          bias->layout() != at::kStrided)
        continue;
    }
    std::vector<int64_t> stride = a[0]->toIntVector(), padding = a[1]->toIntVector(),
                         dilation = a[2]->toIntVector();
    if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) continue;
    int64_t groups = a[3]->toInt();
    std::vector<int64_t> input_size = {1, weight.size(1) * groups, 32, 32};
    if (auto it = known.find(n); it != known.end()) input_size = it->second;
    torch::jit::Stack stack{weight,   bias,   c10::IValue(stride), c10::IValue(padding),
                            dilation, groups, input_size,          std::string("none")};
    try {
      handle->callBoxed(&stack);
    } catch (const std::exception&) {
      continue;  // a conv oneDNN cannot pack stays an aten::conv2d
    }
    contexts.push_back(stack.at(0));
    weights.push_back(weight);
    biases.push_back(bias);
    std::vector<int64_t> packed_args = stride;
    packed_args.insert(packed_args.end(), padding.begin(), padding.end());
    packed_args.insert(packed_args.end(), dilation.begin(), dilation.end());
    packed_args.push_back(groups);
    packed_args.insert(packed_args.end(), input_size.begin(), input_size.end());
    args.push_back(packed_args);
    rewritten.push_back(n);
  }
  if (rewritten.empty()) return 0;
  c10::TypePtr context_type = contexts.front().type();
  c10::impl::GenericList packed(context_type);
  for (const auto& c : contexts) packed.push_back(c);
  frozen.register_attribute("_prepacked_weights", c10::ListType::ofTensors(), weights);
  frozen.register_attribute("_prepacked_biases",
                            c10::ListType::create(c10::OptionalType::ofTensor()), biases);
  frozen.register_attribute("_prepacked_args", c10::ListType::create(c10::ListType::ofInts()),
                            args);
  frozen.register_attribute("_prepacked", c10::ListType::create(context_type), packed);
  frozen.define(R"(
def _conv2d_prepacked(self, x: Tensor, i: int) -> Tensor:
    args = self._prepacked_args[i]
    weight = self._prepacked_weights[i]
    if x.dim() == 4 and x.dtype == weight.dtype and x.device == weight.device and x.layout == weight.layout and x.size(1) == weight.size(1) * args[6] and not (x.requires_grad and torch.is_grad_enabled()):
        return ops.mkldnn_prepacked.conv2d_run(x, self._prepacked[i])
    return torch.conv2d(x, weight, self._prepacked_biases[i], args[0:2], args[2:4], args[4:6], args[6])

def __getstate__(self) -> Tuple[List[Tensor], List[Optional[Tensor]], List[List[int]]]:
    return (self._prepacked_weights, self._prepacked_biases, self._prepacked_args)

def __setstate__(self, state: Tuple[List[Tensor], List[Optional[Tensor]], List[List[int]]]):
    self._prepacked_weights = state[0]
    self._prepacked_biases = state[1]
    self._prepacked_args = state[2]
    self._prepacked = [ops.mkldnn_prepacked.conv2d_prepack(state[0][i], state[1][i], state[2][i][0:2], state[2][i][2:4], state[2][i][4:6], state[2][i][6], state[2][i][7:11], "none") for i in range(len(state[0]))]
)",
                std::make_shared<SourceResolver>());
  for (size_t i = 0; i < rewritten.size(); ++i) {
    torch::jit::Node* n = rewritten[i];
    torch::jit::WithInsertPoint guard(n);
    torch::jit::Value* index = graph->insertConstant(static_cast<int64_t>(i));
    torch::jit::Node* call = graph->insertNode(
        graph->create(c10::prim::CallMethod, {graph->inputs().at(0), n->input(0), index}));
    call->s_(c10::attr::name, kPrepackedConv);
    call->output()->setType(n->output()->type());
    n->output()->replaceAllUsesWith(call->output());
    n->destroy();
  }
  return static_cast<int64_t>(rewritten.size());
}

torch::jit::Module optimize_for_inference(
    const torch::jit::Module& m, const std::vector<std::optional<std::vector<int64_t>>>& shapes,
    InferenceOptimization& info) {
  info.ops_before = aten_histogram(m.get_method("forward").graph()->block());
  torch::jit::Module frozen;
  try {
    frozen = torch::jit::freeze(m, std::nullopt, /*optimize_numerics=*/true);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw Error(ExitCode::Unsupported,
                "--optimize-for-inference: LibTorch cannot freeze the model: " + first_line(msg) +
                    " — convert without --optimize-for-inference");
  }
  std::shared_ptr<torch::jit::Graph> graph = frozen.get_method("forward").graph();
  torch::jit::FuseFrozenConvAddRelu(graph);
  torch::jit::FrozenLinearTranspose(graph);
  info.passes = {"freeze", "fuse-frozen-conv-add-relu", "frozen-linear-transpose"};
  info.prepacked_convolutions = prepack_convolutions(frozen, shapes);
  if (info.prepacked_convolutions) info.passes.push_back("prepack-convolutions");
  info.ops_after = aten_histogram(graph->block());
  return frozen;
}

}  // namespace

bool InferenceOptimization::reassociated() const {
  auto without_dropout = [](std::map<std::string, int64_t> h) {
    for (const char* k : {"aten::dropout", "aten::dropout_", "aten::feature_dropout",
                          "aten::feature_dropout_", "aten::alpha_dropout", "aten::alpha_dropout_",
                          "aten::feature_alpha_dropout", "aten::feature_alpha_dropout_"})
      h.erase(k);
    return h;
  };
  return without_dropout(ops_before) != without_dropout(ops_after);
}

void save_torchscript_module(const Graph& g, const std::string& src,
                             const std::vector<std::pair<std::string, at::Tensor>>& constants,
                             const std::string& path, const std::string& class_name,
                             InferenceOptimization* optimize) {
  ModTree root;
  for (const std::string& name : g.weights().names()) {
    std::vector<std::string> comps;
    for (size_t start = 0;;) {
      size_t dot = name.find('.', start);
      comps.push_back(
          name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    ModTree* t = &root;
    for (size_t i = 0; i + 1 < comps.size(); ++i) {
      auto it = t->children.find(comps[i]);
      if (it == t->children.end()) {
        t->order.push_back(comps[i]);
        it = t->children.emplace(comps[i], std::make_unique<ModTree>()).first;
      }
      t = it->second.get();
    }
    const Weight& w = g.weights().at(name);
    (w.is_param ? t->params : t->buffers).emplace_back(comps.back(), w);
  }

  try {
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    std::string base = "__torch__.tinytrace";
    torch::jit::Module m = build_module(root, base + "." + class_atom(class_name), cu, "");
    for (const auto& [name, t] : constants)
      m.register_attribute(name, c10::TensorType::get(), t.detach(), /*is_param=*/false,
                           /*is_buffer=*/false);
    try {
      m.define(src, source_resolver(g, cu));
    } catch (const std::exception& e) {
      std::string msg = e.what();
      std::string first = msg.substr(msg.find_first_not_of(" \n"));
      first = first.substr(0, first.find('\n'));
      throw Error(ExitCode::Internal,
                  "--emit torchscript: the generated forward does not compile: " + first +
                      " — report it as a tinytrace bug",
                  {msg, src});
    }
    m.eval();  // before freezing too: freeze refuses a module in training mode
    if (optimize) {
      std::vector<std::optional<std::vector<int64_t>>> shapes;
      for (const Value* v : g.inputs())
        shapes.push_back(v->type().kind == Type::Kind::Tensor ? v->type().shape : std::nullopt);
      m = optimize_for_inference(m, shapes, *optimize);
    }
    // Through a stream whose failure we see: a full disk is exit 6 (Note [Exit code 6]).
    errno = 0;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out) m.save(out);
    out.close();
    if (!out) throw output_error(path, errno);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw Error(ExitCode::Internal, "--emit torchscript: cannot build or save " + path + ": " +
                                        first_line(msg) + " — report it as a tinytrace bug");
  }
}

}  // namespace tt
