// The Python emitter's __init__: the module tree (Note [Shape of the generated module] in
// lib/emitters/python.cpp), parameter and buffer registrations, nn constructors with their
// defaults left out, qconfigs of a --quant-prep model, and whether inplace=True is safe.
#include "emitters/python/emitter.h"

#include "ir/quant.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace tt::pyemit {
namespace {

// Whether a module's list attribute may be written as one number when all elements are equal
// (the module expands it again with _single/_pair/_triple/_quadruple).
bool collapsible_module_attr(const std::string& name) {
  static const std::set<std::string> names = {"kernel_size", "stride",         "padding",
                                              "dilation",    "output_padding", "output_size",
                                              "size",        "scale_factor"};
  return names.count(name) != 0;
}

bool numeric_equal(const std::string& a, const std::string& b) {
  auto parse = [](const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  };
  double x, y;
  return parse(a, x) && parse(b, y) && x == y;
}

}  // namespace

// Import aliases for op-name prefixes of quantization modules.
const std::map<std::string, std::string>& import_aliases() {
  static const std::map<std::string, std::string> m = {
      {"quant", "torch.ao.quantization"},
      {"nni", "torch.ao.nn.intrinsic"},
      {"nniqat", "torch.ao.nn.intrinsic.qat"},
      {"nnq", "torch.ao.nn.quantized"},
      {"nnqat", "torch.ao.nn.qat"},
      {"nniq", "torch.ao.nn.intrinsic.quantized"},
      {"nnqd", "torch.ao.nn.quantized.dynamic"},
  };
  return m;
}

// Module classes called through a method ("FloatFunctional.add" -> self.ff.add(a, b)).
const std::map<std::string, std::string>& method_module_classes() {
  static const std::map<std::string, std::string> m = {
      {"FloatFunctional", "nnq.FloatFunctional"},
      {"QFunctional", "nnq.QFunctional"},
  };
  return m;
}

// ---------------------------------------------------------------------------------------------
// the module tree

// The entry for `path`, created (with its missing ancestors) when needed. A new entry goes
// right after the sibling that contains `after` (the module called just before it), else last.
ModEntry* PyEmitter::entry(const std::string& path, const std::string& after) {
  auto it = entries_.find(path);
  if (it != entries_.end()) return it->second;
  storage_.emplace_back();
  ModEntry* e = &storage_.back();
  e->path = path;
  entries_[path] = e;
  if (!path.empty()) {
    if (g_.weights().has(path))
      throw Error(ExitCode::Unsupported,
                  "'" + path + "' is both a weight and a module path — rename one of them");
    size_t dot = path.rfind('.');
    std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
    e->name = dot == std::string::npos ? path : path.substr(dot + 1);
    if (e->name.empty())
      throw Error(ExitCode::Unsupported, "module path '" + path + "' has an empty component");
    e->parent = entry(parent, after);
    auto& siblings = e->parent->children;
    auto pos = siblings.end();
    if (!after.empty()) {
      for (auto s = siblings.begin(); s != siblings.end(); ++s)
        if (after == (*s)->path || after.rfind((*s)->path + ".", 0) == 0) pos = std::next(s);
    }
    siblings.insert(pos, e);
    e->parent->by_name[e->name] = e;
  }
  return e;
}

void PyEmitter::build_module_tree() {
  entry("");
  // Module ops and the weights they own.
  std::map<std::string, std::string> owner;  // weight name -> module path
  std::vector<const Node*> module_ops;
  for (Node* n : graph_nodes()) {  // calls inside if/loop bodies too, in program order
    if (n->module().empty()) continue;
    module_ops.push_back(n);
    module_calls_[n->module()].push_back(n);
    auto it = module_nodes_.find(n->module());
    if (it == module_nodes_.end()) {
      module_nodes_[n->module()] = n;
    } else if (it->second->op() != n->op()) {
      unsupported(*n,
                  "module '" + n->module() + "' is called both as " + it->second->op() +
                      " and as " + n->op(),
                  "give the two calls different module paths");
    } else if (!same_attrs(*it->second, *n)) {
      diags_.warn("python-shared-module-attrs",
                  "module '" + n->module() +
                      "' is called several times with different attributes; "
                      "the generated code constructs it with those of its first call",
                  n->num_outputs() ? n->output(0)->name() : "", n->scope(), n->loc());
    }
    for (const auto& [key, name] : n->weights()) {
      if (name != n->module() + "." + key)
        unsupported(*n,
                    "its weight '" + key + "' refers to '" + name +
                        "', but nn modules keep it as '" + n->module() + "." + key + "'",
                    "rename the weight to match the module path");
      if (!g_.weights().has(name))
        unsupported(*n, "its weight '" + name + "' is not in the graph's weights",
                    "add the weight (the .tir weights section) or drop the reference");
      owner[name] = n->module();
    }
  }
  // Weights in state_dict order decide the order of containers and registrations.
  for (const std::string& name : g_.weights().names()) {
    auto own = owner.find(name);
    if (own != owner.end()) {
      entry(own->second);
      continue;
    }
    size_t dot = name.rfind('.');
    ModEntry* container = entry(dot == std::string::npos ? "" : name.substr(0, dot));
    (g_.weights().at(name).is_param ? container->params : container->buffers).push_back(name);
  }
  // Modules without weights (activations, pooling) are declared where they are first called,
  // so __init__ reads in the model's order: conv1, bn1, relu, maxpool, layer1, ...
  std::string last_called;
  for (const Node* n : module_ops) {
    entry(n->module(), last_called)->op = module_nodes_.at(n->module());
    last_called = n->module();
  }
  for (const Node* n : graph_nodes())  // modules whose attributes are state (flat layout only)
    if (n->is("prim.StateGet") || n->is("prim.StateSet")) entry(n->attrs().get_str("module"));
}

bool PyEmitter::same_attrs(const Node& a, const Node& b) {
  const auto& x = a.attrs().items();
  const auto& y = b.attrs().items();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].first != y[i].first || !attr_equal(x[i].second, y[i].second)) return false;
  return true;
}

std::vector<std::string> PyEmitter::emit_init() {
  std::vector<std::string> lines;
  emit_entry(*entries_.at(""), lines);
  return lines;
}

void PyEmitter::emit_entry(const ModEntry& e, std::vector<std::string>& lines) {
  std::string here = self_path(e.path);
  if (e.parent) {
    std::string ctor = e.op ? module_ctor(*e.op) : "nn.Module()";
    lines.push_back(assign_attr(self_path(e.parent->path), e.name, ctor));
    if (e.op && prepared_) {
      std::string qconfig = module_qconfig(*e.op);
      if (!qconfig.empty()) lines.push_back(here + ".qconfig = " + qconfig);
    }
  }
  auto attr_of = [](const std::string& weight) {
    size_t dot = weight.rfind('.');
    return dot == std::string::npos ? weight : weight.substr(dot + 1);
  };
  for (const auto& w : e.params) {
    const at::Tensor& t = g_.weights().at(w).tensor;
    DType d = weight_dtype(w, t);
    std::string rhs = "nn.Parameter(" + empty_tensor(t, d);
    if (!is_float_dtype(d) && !is_complex_dtype(d)) rhs += ", requires_grad=False";
    rhs += ")";
    lines.push_back(assign_attr(here, attr_of(w), rhs));
  }
  for (const auto& w : e.buffers) {
    const at::Tensor& t = g_.weights().at(w).tensor;
    lines.push_back(here + ".register_buffer(" + py_str(attr_of(w)) + ", " +
                    empty_tensor(t, weight_dtype(w, t)) + ")");
  }
  for (const ModEntry* c : e.children) emit_entry(*c, lines);
}

DType PyEmitter::weight_dtype(const std::string& name, const at::Tensor& t) const {
  if (!t.defined())
    throw Error(ExitCode::Internal,
                "weight '" + name + "' has no tensor — this is a bug in tinytrace");
  DType d = tensor_dtype(t);
  if (is_quantized_dtype(d) || d == DType::Unknown)
    throw Error(ExitCode::Unsupported,
                "weight '" + name + "' has a dtype (" +
                    std::string(c10::toString(t.scalar_type())) +
                    ") that cannot be declared in Python — convert it to float first");
  return d;
}

std::string PyEmitter::empty_tensor(const at::Tensor& t, DType d) {
  std::string s = "torch.empty(" + shape_args(t.sizes());
  if (d != DType::F32) s += std::string(", dtype=") + dtype_python(d);
  return s + ")";
}

// Note [qconfig of float modules]
// In a --quant-prep model (one with Quant/DeQuantStubs), a module that eager quantization cannot
// run on quantized tensors sits in a float region (passes/float_fallback.cpp) and must also be
// left alone by torch.ao.quantization.prepare/convert, which would otherwise observe nn.LSTM's
// tuple output or swap nn.MultiheadAttention's out_proj for a quantized Linear: its own
// `qconfig = None` wins over the model-wide qconfig the user sets. nn.Embedding(Bag) is
// quantized weight-only (float in, float out), which eager mode supports only with
// float_qparams_weight_only_qconfig (also under prepare_qat). Returns "" for other modules.
std::string PyEmitter::module_qconfig(const Node& n) {
  if (n.is("nn.Embedding") || n.is("nn.EmbeddingBag")) {
    use_alias("quant");
    return "quant.float_qparams_weight_only_qconfig";
  }
  const OpInfo* info = n.info();
  if (info && info->kind == OpKind::Module && info->qclass == QuantClass::Float)
    return "None  # " + n.op() + " stays float (no eager-mode quantized version)";
  return "";
}

std::string PyEmitter::module_ctor(const Node& n) { return render_literal(module_ctor_expr(n)); }

CExpr PyEmitter::module_ctor_expr(const Node& n) {
  std::optional<DType> dtype = module_float_dtype(n);
  // Composite intrinsic modules are built from their parts (Note [Composite modules] in
  // lib/ir/quant.h): nni.ConvReLU2d(nn.Conv2d(...), nn.ReLU()).
  if (const auto* parts = composite_parts(n.op())) {
    std::string prefix = n.op().substr(0, n.op().find('.'));
    if (import_aliases().count(prefix)) use_alias(prefix);
    CExpr e;
    e.callee = n.op();
    for (size_t i = 0; i < parts->size(); ++i) {
      e.args.push_back(module_ctor_expr_of(n, (*parts)[i].op, composite_part_attrs(n, i)));
      e.args.back().positional = true;
      e.args.back().name = "module" + std::to_string(i);
    }
    return e;
  }
  CExpr e = module_ctor_expr_of(n, n.op(), n.attrs());
  if (dtype) {
    CExpr a;
    a.name = "dtype";
    a.text = dtype_python(*dtype);
    e.args.push_back(a);
  }
  return e;
}

// Note [Float dtype of nn modules]
// An nn module creates its parameters and buffers in the default dtype (float32), and
// load_state_dict copies NAME.pth's tensors into them: a module whose weights are float64 (or
// float16, bfloat16) would silently compute in float32, or fail on a float64 input. Its
// constructor gets `dtype=` (every parameterised nn module takes it) when all its float weights
// share one dtype other than float32; mixed float dtypes, and a composite module (nni.ConvReLU2d
// from its parts) not in float32, are refused. Integer buffers (BatchNorm's
// num_batches_tracked) keep their own dtype whatever `dtype=` says. Modules outside nn.*
// (quantized ones, whose `dtype` argument means the quantized dtype) are left as they were.
std::optional<DType> PyEmitter::module_float_dtype(const Node& n) const {
  std::optional<DType> found;
  for (const auto& [key, name] : n.weights()) {
    if (!g_.weights().has(name) || !g_.weights().at(name).tensor.defined()) continue;
    DType d = tensor_dtype(g_.weights().at(name).tensor);
    if (!is_float_dtype(d)) continue;  // integer buffers, quantized weights
    if (found && *found != d)
      unsupported(n,
                  std::string("its weights mix float dtypes (") + dtype_python(*found) + " and " +
                      dtype_python(d) + "), which one nn module cannot hold",
                  "convert the module's weights to one dtype");
    found = d;
  }
  if (!found || *found == DType::F32) return std::nullopt;
  if (composite_parts(n.op()))
    unsupported(n, std::string("a composite module with ") + dtype_python(*found) + " weights",
                "convert the model to float32");
  return n.op().rfind("nn.", 0) == 0 ? found : std::nullopt;
}

// The constructor call of module op `op` with attributes `attrs` (n: for errors and inplace).
CExpr PyEmitter::module_ctor_expr_of(const Node& n, const std::string& op, const Attrs& attrs) {
  size_t dot = op.find('.');
  std::string prefix = dot == std::string::npos ? "" : op.substr(0, dot);
  CExpr e;
  if (prefix == "nn") {
    e.callee = op;
  } else if (import_aliases().count(prefix)) {
    use_alias(prefix);
    e.callee = op;
  } else if (method_module_classes().count(prefix)) {
    e.callee = method_module_classes().at(prefix);
    use_alias(e.callee.substr(0, e.callee.find('.')));
  } else if (prefix == "torch" && dot != std::string::npos) {
    e.callee = op;
    std::string mod = op.substr(0, op.rfind('.'));
    if (mod != "torch" && mod != "torch.nn") imports_.insert("import " + mod);
  } else {
    unsupported(n, "module op '" + op + "' has no known Python class",
                "add it to the op table in lib/ir/op_table.cpp");
  }
  if (method_module_classes().count(prefix)) return e;
  if (const PyHelper* h = python_helper_for(op)) e.callee = h->name;

  auto leaf = [](const std::string& name, std::string text, bool positional,
                 std::optional<std::string> def) {
    CExpr a;
    a.name = name;
    a.text = std::move(text);
    a.positional = positional;
    a.def = std::move(def);
    return a;
  };
  // Note [Python signatures] (lib/ir/op_table.h): required leading arguments, defaults.
  const std::vector<PyParam>* sig = python_signature(op);
  std::set<std::string> done;
  if (sig) {
    // Required arguments positionally (nn.Conv2d(3, 64, ...)), except kernel_size, which reads
    // better as a keyword; stop at the first one that cannot be positional.
    for (const auto& p : *sig) {
      if (p.def || p.name == "kernel_size" || !attrs.has(p.name)) break;
      e.args.push_back(leaf(p.name, module_attr_text(p.name, attrs.at(p.name)), true, {}));
      done.insert(p.name);
    }
  }
  for (const auto& [name, value] : attrs.items()) {
    if (done.count(name)) continue;
    std::string text = module_attr_text(name, value);
    if (name == "inplace" && text == "True" && !inplace_is_safe(n.module())) text = "False";
    std::optional<std::string> def;
    if (sig) {
      auto p =
          std::find_if(sig->begin(), sig->end(), [&](const PyParam& c) { return c.name == name; });
      if (p != sig->end() && p->def) {
        def = *p->def;
        if (numeric_equal(*p->def, text)) text = *p->def;  // 1e-05 written as the default spells it
      }
    }
    e.args.push_back(leaf(name, text, false, def));
  }
  return e;
}

// An argument left out because it has its default.
bool PyEmitter::at_default(const CExpr& a) {
  return !a.positional && a.is_leaf() && a.def && *a.def == a.text;
}

std::string PyEmitter::render_literal(const CExpr& e) {
  return render(e, [](const CExpr&) -> const std::string* { return nullptr; });
}

// Note [In-place modules]
// The IR is functional: a module that had inplace=True (nn.ReLU(inplace=True) in ResNet) is a
// node whose input may still be read by a later node, for example after a pass rewired uses.
// inplace=True is kept, for fidelity, only when every call mutates a tensor nothing else can
// see: the input is used by that call alone and is a fresh result (not a graph input, weight,
// view or possible alias of another value). Otherwise the module is built with inplace=False,
// which gives the same numbers; inplace is not part of the state_dict.
bool PyEmitter::inplace_is_safe(const std::string& path) const {
  auto it = module_calls_.find(path);
  if (it == module_calls_.end()) return false;
  for (const Node* n : it->second) {
    if (n->num_inputs() == 0) continue;
    const Value* in = n->input(0);
    if (in->num_uses() != 1 || !fresh_value(in)) return false;
  }
  return true;
}

bool PyEmitter::fresh_value(const Value* v) const {
  const Node* p = v->node();
  if (!p || p->owning_block() != g_.block() || p == g_.block()->param_node()) return false;
  if (!p->module().empty()) {
    // Modules whose result is their input (Note [Op facts]). The quantization stubs are left
    // out although before convert they return their input too (so nn.ReLU(inplace=True) after
    // a QuantStub of a graph input writes to the caller's tensor while calibrating): counting
    // them would be right but changes what --quant-prep writes.
    if (op_has(*p, kReturnsInput) && !p->is("quant.QuantStub") && !p->is("quant.DeQuantStub"))
      return false;
    if (p->attrs().get_bool("inplace", false)) {
      // Its result is its (mutated) input: fresh only if that input was.
      return p->num_inputs() > 0 && p->input(0)->num_uses() == 1 && fresh_value(p->input(0));
    }
    return p->info() != nullptr;
  }
  const OpInfo* info = p->info();
  if (!info || (info->kind != OpKind::Function && info->kind != OpKind::Method)) return false;
  // Results that may share storage with an input.
  return (info->facts & kMayAliasInput) == 0;
}

std::string PyEmitter::module_attr_text(const std::string& name, const AttrValue& v) {
  if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
    bool uniform = !l->empty() &&
                   std::all_of(l->begin(), l->end(), [&](int64_t x) { return x == l->front(); });
    if (uniform && collapsible_module_attr(name)) return std::to_string(l->front());
    if (l->size() == 1 && name == "normalized_shape") return std::to_string(l->front());
    return py_tuple(int_items(*l));
  }
  if (auto* l = std::get_if<std::vector<double>>(&v)) {
    bool uniform =
        !l->empty() && std::all_of(l->begin(), l->end(), [&](double x) { return x == l->front(); });
    if (uniform && collapsible_module_attr(name)) return py_float(l->front());
    return py_tuple(float_items(*l));
  }
  if (auto* l = std::get_if<std::vector<std::string>>(&v)) {
    std::vector<std::string> items;
    for (const auto& x : *l) items.push_back(py_str(x));
    return py_tuple(items);
  }
  return literal(v, Type::any()).text;
}

void PyEmitter::use_alias(const std::string& alias) {
  auto it = import_aliases().find(alias);
  if (it != import_aliases().end()) imports_.insert("import " + it->second + " as " + alias);
}

}  // namespace tt::pyemit
