// ONNX values -> IR values: constant inputs, new IR nodes and their constants, weights, and the
// module paths of parametric layers.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <sstream>

namespace tt::onnx_import {

// ---- values ----

bool Importer::has_input(const ox::NodeProto& n, int i) {
  return i < n.input_size() && !n.input(i).empty();
}

bool Importer::is_const(const std::string& name) { return consts_.count(name) != 0; }

const at::Tensor* Importer::const_of(const ox::NodeProto& n, int i) {
  if (!has_input(n, i)) return nullptr;
  auto it = consts_.find(n.input(i));
  return it == consts_.end() ? nullptr : &it->second;
}

std::vector<int64_t> Importer::ints_of(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous().flatten();
  return std::vector<int64_t>(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
}

std::vector<double> Importer::doubles_of(const at::Tensor& t) {
  at::Tensor l = t.to(at::kDouble).contiguous().flatten();
  return std::vector<double>(l.data_ptr<double>(), l.data_ptr<double>() + l.numel());
}

// ---- IR nodes ----

// A new node at the end of the current block, or before the outermost control-flow node being
// lifted while hoisting (Note [ONNX control flow]).
Node* Importer::append(const std::string& op, const std::vector<Value*>& ins) {
  Node* n = g_->create(op, ins, 0);
  n->set_scope(scope_);
  if (hoisting_ && hoist_)
    n->insert_before(hoist_);
  else
    block_->append(n);
  return n;
}

Value* Importer::constant(AttrValue v, Type t) {
  Node* n = append("prim.Constant", {});
  n->attrs().set("value", std::move(v));
  return n->add_output(std::move(t));
}

Value* Importer::c_int(int64_t i) { return constant(i, Type::of(Type::Kind::Int)); }

Value* Importer::c_float(double f) { return constant(f, Type::of(Type::Kind::Float)); }

Value* Importer::c_bool(bool b) { return constant(b, Type::of(Type::Kind::Bool)); }

Value* Importer::c_str(const std::string& s) { return constant(s, Type::of(Type::Kind::Str)); }

Value* Importer::c_none() { return constant(NoneAttr{}, Type::of(Type::Kind::None)); }

Value* Importer::c_ints(std::vector<int64_t> v) {
  return constant(std::move(v), Type::list(Type::of(Type::Kind::Int)));
}

Value* Importer::c_floats(std::vector<double> v) {
  return constant(std::move(v), Type::list(Type::of(Type::Kind::Float)));
}

Type Importer::type_for(const std::string& name) {
  auto it = types_.find(name);
  return it == types_.end() ? Type::tensor() : it->second;
}

// Registers a weight (once per ONNX constant) and returns its state_dict name.
std::string Importer::weight_for(const std::string& onnx_name, const at::Tensor& t, bool is_param) {
  auto it = weight_names_.find(onnx_name);
  if (it != weight_names_.end()) return it->second;
  std::string name = g_->weights().unique_name(dotted_name(onnx_name));
  g_->weights().set(name, Weight{t.contiguous(), is_param});
  weight_names_[onnx_name] = name;
  return name;
}

// The IR value of an ONNX tensor: computed values, or constants materialised on first use
// (small ones inline, larger ones as buffers/parameters read with prim.GetAttr).
Value* Importer::tensor_in(const std::string& name) {
  auto e = env_.find(name);
  if (e != env_.end()) return e->second;
  auto c = consts_.find(name);
  if (c == consts_.end() && sym_.count(name)) return materialize(name);
  if (c == consts_.end())
    throw Error(ExitCode::BadInput, "value '" + name +
                                        "' is used but never defined — the ONNX graph is "
                                        "malformed; re-export it");
  const at::Tensor& t = c->second;
  Value* v;
  std::string saved = scope_;
  scope_.clear();
  hoisting_ = true;
  if (t.numel() <= 8 && !init_names_.count(name)) {
    v = constant(t.clone(),
                 Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())),
                              t.sizes().vec()));
  } else {
    bool param = init_names_.count(name) && t.is_floating_point();
    Node* n = append("prim.GetAttr", {});
    n->set_weight("value", weight_for(name, t, param));
    v = n->add_output(Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())),
                                   t.sizes().vec()));
  }
  scope_ = saved;
  hoisting_ = false;
  env_[name] = v;
  return v;
}

// For elementwise math: a one-element floating constant becomes a Python float (`x * 0.5`).
Value* Importer::operand(const ox::NodeProto& n, int i, const std::string& other) {
  const at::Tensor* c = const_of(n, i);
  if (c && c->numel() == 1 && c->is_floating_point()) {
    auto r = rank_of(other);
    // A float32 constant reads back as its shortest decimal (0.7, not 0.699999988): the same
    // float32 value when it scales a float32 tensor.
    if (r && *r >= c->dim())
      return c_float(c->scalar_type() == at::kFloat ? nice_float(c->item<float>())
                                                    : c->item<double>());
  }
  return tensor_in(n.input(i));
}

void Importer::bind(const ox::NodeProto& n, int i, Value* v) {
  if (i >= n.output_size() || n.output(i).empty()) return;
  const std::string& name = n.output(i);
  auto it = types_.find(name);
  if (it != types_.end() && v->node()->owning_block() && !v->node()->is("prim.GetAttr") &&
      !v->node()->is("prim.Constant"))
    v->set_type(it->second);
  env_[name] = v;
}

Value* Importer::out(Node* node, const ox::NodeProto& n, int i) {
  std::string name = i < n.output_size() ? n.output(i) : "";
  Value* v = node->add_output(name.empty() ? Type::tensor() : type_for(name), value_hint(name));
  bind(n, i, v);
  return v;
}

Node* Importer::call(const std::string& op, const std::vector<Value*>& ins, const ox::NodeProto& n,
                     int i) {
  Node* node = append(op, ins);
  out(node, n, i);
  return node;
}

Value* Importer::method(const std::string& op, const std::vector<Value*>& ins) {
  Node* node = append(op, ins);
  return node->add_output(Type::tensor());
}

Value* Importer::list_of(const std::vector<Value*>& vs) {
  Node* l = append("prim.ListConstruct", vs);
  return l->add_output(Type::list(Type::tensor()));
}

// ---- module paths ----

// "/layer2/layer2.0/downsample/downsample.0/Conv" -> "layer2.0.downsample.0" (the exporter
// writes each level's name relative to its parent, sometimes with the parent's name in front).
std::string Importer::path_from_node_name(const std::string& node_name) {
  if (node_name.find('/') == std::string::npos) return "";
  std::vector<std::string> comps;
  std::stringstream ss(node_name);
  std::string c;
  while (std::getline(ss, c, '/'))
    if (!c.empty()) comps.push_back(c);
  if (!comps.empty()) comps.pop_back();  // the op ("Conv", "Gemm_1")
  std::string path, base, last;
  for (const auto& comp : comps) {
    if (!last.empty() && comp.rfind(last + ".", 0) == 0) {
      path = base.empty() ? comp : base + "." + comp;
    } else {
      base = path;
      path = path.empty() ? comp : path + "." + comp;
    }
    last = comp;
  }
  return path.empty() ? "" : dotted_name(path);
}

// Module path for a layer whose main weight is the ONNX tensor `weight` (nullptr: none).
std::string Importer::module_path(const ox::NodeProto& n, const std::string& weight,
                                  const std::string& fallback) {
  auto shared = module_of_weight_.find(weight);
  if (!weight.empty() && shared != module_of_weight_.end()) return shared->second;
  std::string path;
  const std::string suffix = ".weight";
  if (weight.size() > suffix.size() &&
      weight.compare(weight.size() - suffix.size(), suffix.size(), suffix) == 0 &&
      weight.find("::") == std::string::npos && weight.find('/') == std::string::npos)
    path = dotted_name(weight.substr(0, weight.size() - suffix.size()));
  if (path.empty()) path = path_from_node_name(n.name());
  if (path.empty() && !n.name().empty()) path = sanitize_name(n.name());
  if (path.empty()) path = fallback;
  std::string unique = path;
  for (int k = 1; used_modules_.count(unique) || g_->weights().has(unique); ++k)
    unique = path + "_" + std::to_string(k);
  used_modules_.insert(unique);
  if (!weight.empty()) module_of_weight_[weight] = unique;
  return unique;
}

// Registers `t` as <module>.<key> and refers to it from `node`.
void Importer::module_weight(Node* node, const std::string& key, const at::Tensor& t,
                             bool is_param) {
  std::string name = node->module() + "." + key;
  if (!g_->weights().has(name)) g_->weights().set(name, Weight{t.contiguous(), is_param});
  node->set_weight(key, name);
}

std::string Importer::scope_parent(const std::string& module) {
  size_t dot = module.rfind('.');
  return dot == std::string::npos ? "" : module.substr(0, dot);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
