// ONNX loader: reads an ONNX ModelProto (opsets 9-17) into the same IR the TorchScript loader
// produces, so every pass and emitter works on it unchanged.
//
// Note [Lifting ONNX]
// - The only TU with ONNX/protobuf headers. Debian's libonnx_proto is the very shared library
//   LibTorch links, so there is one copy of the generated descriptors (no double registration).
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
//   constant. x*Sigmoid(x) -> F.silu, x*HardSigmoid(x) -> F.hardswish and the Erf form of GELU
//   -> F.gelu are recognised, as the exporter writes them that way at opset 13.
// - Gather of run-time ids from a 2-d float initializer (axis 0) is nn.Embedding; conv/pool
//   padding that PyTorch cannot express (auto_pad=SAME_*, asymmetric pads) becomes the op's
//   symmetric part plus an F.pad of the excess before it.
// - ONNX has no num_batches_tracked: BatchNorm gets a fresh int64 0 buffer (what a newly built
//   nn.BatchNorm holds; it only matters for training with momentum=None) and a note says so.
// - An op without a mapping throws Unsupported naming the op type and the node; a file that is
//   not a ModelProto throws BadInput.
#include "loaders/loader.h"
#include "passes/pass.h"

#if __has_include(<onnx/onnx_pb.h>)
#define TT_HAVE_ONNX 1
// What Debian's ONNXTargets.cmake asks for (CMake links onnx_proto link-only, see CMakeLists.txt).
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#else
#define TT_HAVE_ONNX 0
#endif

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tt {

#if !TT_HAVE_ONNX

std::unique_ptr<Graph> load_onnx(const std::string&, Diagnostics&) {
  throw Error(ExitCode::Unsupported,
              "this tinytrace was built without ONNX support — install libonnx-dev and rebuild");
}

#else

namespace {

namespace ox = ::onnx;

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

[[noreturn]] void bad(const std::string& msg) { throw Error(ExitCode::BadInput, msg); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad("cannot open the file — check the path and its permissions");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string dirname_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? "." : (s == 0 ? "/" : path.substr(0, s));
}

std::optional<at::ScalarType> scalar_type(int32_t t) {
  switch (t) {
    case ox::TensorProto::FLOAT: return at::kFloat;
    case ox::TensorProto::DOUBLE: return at::kDouble;
    case ox::TensorProto::FLOAT16: return at::kHalf;
    case ox::TensorProto::BFLOAT16: return at::kBFloat16;
    case ox::TensorProto::INT64: return at::kLong;
    case ox::TensorProto::INT32: return at::kInt;
    case ox::TensorProto::INT16: return at::kShort;
    case ox::TensorProto::INT8: return at::kChar;
    case ox::TensorProto::UINT8: return at::kByte;
    case ox::TensorProto::BOOL: return at::kBool;
    default: return std::nullopt;
  }
}

DType dtype_of(int32_t t) {
  auto s = scalar_type(t);
  return s ? dtype_from_scalar_type(static_cast<int64_t>(*s)) : DType::Unknown;
}

// State_dict-like name: dots kept, anything else that is not [A-Za-z0-9_] becomes '_'.
std::string dotted_name(const std::string& raw) {
  std::string out;
  for (char c : raw) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
  // No empty segments ("a..b", leading/trailing dots).
  std::string clean;
  std::stringstream ss(out);
  std::string seg;
  while (std::getline(ss, seg, '.')) {
    if (seg.empty()) continue;
    if (!clean.empty()) clean += '.';
    clean += seg;
  }
  return clean.empty() ? "w" : clean;
}

// A value name worth keeping: exporter-generated names ("/conv1/Conv_output_0", "onnx::Mul_12")
// are dropped so the emitter derives one from the op or module.
std::string value_hint(const std::string& raw) {
  if (raw.find('/') != std::string::npos || raw.find("::") != std::string::npos) return "";
  return sanitize_name(raw);
}

class Importer {
 public:
  Importer(ox::ModelProto& model, std::string path, Diagnostics& diags)
      : model_(model), path_(std::move(path)), diags_(diags) {}

  std::unique_ptr<Graph> run() {
    g_ = std::make_unique<Graph>();
    opset_ = 0;
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    if (opset_ == 0) opset_ = 9;
    const ox::GraphProto& gp = model_.graph();
    if (!gp.name().empty()) g_->set_name(sanitize_name(gp.name()));

    for (const auto& vi : gp.value_info()) types_[vi.name()] = value_type(vi);
    for (const auto& vi : gp.output()) types_[vi.name()] = value_type(vi);
    for (const auto& t : gp.initializer()) {
      consts_[t.name()] = to_tensor(t);
      init_names_.insert(t.name());
    }
    for (const auto& vi : gp.input()) {
      types_[vi.name()] = value_type(vi);
      if (consts_.count(vi.name())) continue;  // an initializer listed as an input
      Value* v = g_->add_input(types_[vi.name()], value_hint(vi.name()));
      env_[vi.name()] = v;
    }
    for (int i = 0; i < gp.node_size(); ++i)
      for (const auto& in : gp.node(i).input()) consumers_[in].push_back(i);
    for (int i = 0; i < gp.node_size(); ++i)
      for (const auto& o : gp.node(i).output()) producer_[o] = i;
    for (const auto& o : gp.output()) consumers_[o.name()].push_back(-1);

    for (int i = 0; i < gp.node_size(); ++i) {
      if (skip_.count(i)) continue;
      node_index_ = i;
      lift(gp.node(i));
    }
    for (const auto& o : gp.output()) outputs_.push_back(tensor_in(o.name()));
    if (outputs_.size() == 1) {
      g_->add_output(outputs_[0]);
    } else {
      std::vector<Type> ts;
      for (Value* v : outputs_) ts.push_back(v->type());
      Node* t = g_->create("prim.TupleConstruct", outputs_, 0);
      g_->block()->append(t);
      g_->add_output(t->add_output(Type::tuple(ts)));
    }
    sweep();
    if (bn_count_)
      diags_.add({Severity::Note, "onnx-num-batches-tracked",
                  "ONNX has no num_batches_tracked: the " + std::to_string(bn_count_) +
                      " BatchNorm module(s) get a new int64 0 buffer (as a freshly built nn.BatchNorm)",
                  "", "", ""});
    return std::move(g_);
  }

 private:
  // ---- conversion helpers ----

  Type value_type(const ox::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return Type::any();
    const auto& tt = vi.type().tensor_type();
    Type t = Type::tensor(dtype_of(tt.elem_type()));
    if (tt.has_shape()) {
      std::vector<int64_t> dims;
      for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      t.shape = dims;
    }
    return t;
  }

  at::Tensor to_tensor(const ox::TensorProto& t) {
    auto st = scalar_type(t.data_type());
    std::string what = "initializer/constant '" + t.name() + "'";
    if (!st)
      throw Error(ExitCode::Unsupported, what + " has ONNX data type " + std::to_string(t.data_type()) +
                                             ", which tinytrace does not read — export with float/int tensors");
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    for (int64_t d : dims)
      if (d < 0) bad(what + " has a negative dimension — the file is corrupt; re-export it");
    at::Tensor out = at::empty(dims, at::TensorOptions().dtype(*st));
    size_t nbytes = static_cast<size_t>(out.numel()) * out.element_size();
    auto copy_bytes = [&](const std::string& raw) {
      if (raw.size() != nbytes)
        bad(what + " holds " + std::to_string(raw.size()) + " bytes, expected " + std::to_string(nbytes) +
            " — the file is truncated or corrupt; re-export it");
      if (nbytes) std::memcpy(out.data_ptr(), raw.data(), nbytes);
    };
    if (t.data_location() == ox::TensorProto::EXTERNAL) {
      std::string location;
      int64_t offset = 0, length = -1;
      for (const auto& kv : t.external_data()) {
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset") offset = std::stoll(kv.value());
        else if (kv.key() == "length") length = std::stoll(kv.value());
      }
      if (location.empty()) bad(what + " is stored externally but names no file — re-export it");
      std::string file = location[0] == '/' ? location : dirname_of(path_) + "/" + location;
      std::ifstream in(file, std::ios::binary);
      if (!in)
        bad(what + " is stored in '" + location + "', which cannot be opened — keep the external data "
                   "file(s) next to the .onnx file");
      in.seekg(offset);
      size_t n = length >= 0 ? static_cast<size_t>(length) : nbytes;
      std::string raw(n, '\0');
      in.read(&raw[0], static_cast<std::streamsize>(n));
      if (static_cast<size_t>(in.gcount()) != n)
        bad(what + ": external file '" + location + "' is shorter than the model says — re-copy it");
      copy_bytes(raw);
      return out;
    }
    if (t.has_raw_data()) {
      copy_bytes(t.raw_data());
      return out;
    }
    int64_t n = out.numel();
    auto check = [&](int size) {
      if (size != n)
        bad(what + " holds " + std::to_string(size) + " values for " + std::to_string(n) +
            " elements — the file is corrupt; re-export it");
    };
    switch (*st) {
      case at::kFloat:
        check(t.float_data_size());
        std::copy(t.float_data().begin(), t.float_data().end(), out.data_ptr<float>());
        break;
      case at::kDouble:
        check(t.double_data_size());
        std::copy(t.double_data().begin(), t.double_data().end(), out.data_ptr<double>());
        break;
      case at::kLong:
        check(t.int64_data_size());
        std::copy(t.int64_data().begin(), t.int64_data().end(), out.data_ptr<int64_t>());
        break;
      case at::kHalf:
      case at::kBFloat16: {
        check(t.int32_data_size());
        auto* p = reinterpret_cast<uint16_t*>(out.data_ptr());
        for (int i = 0; i < n; ++i) p[i] = static_cast<uint16_t>(t.int32_data(i));
        break;
      }
      default: {
        check(t.int32_data_size());
        at::Tensor tmp = at::empty({n}, at::kInt);
        std::copy(t.int32_data().begin(), t.int32_data().end(), tmp.data_ptr<int32_t>());
        out.copy_(tmp.view(dims));
        break;
      }
    }
    return out;
  }

  // ---- attributes ----

  const ox::AttributeProto* attr(const ox::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  int64_t attr_i(const ox::NodeProto& n, const char* name, int64_t def) {
    const auto* a = attr(n, name);
    return a ? a->i() : def;
  }
  // ONNX stores floats as float32: read back the shortest decimal that round-trips (0.1, 1e-05),
  // so the generated code shows the hyperparameter as written in Python.
  double attr_f(const ox::NodeProto& n, const char* name, double def) {
    const auto* a = attr(n, name);
    return a ? nice_float(a->f()) : def;
  }
  static double nice_float(float f) {
    char buf[64];
    for (int prec = 6; prec <= 9; ++prec) {
      std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
      if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
    }
    return static_cast<double>(f);
  }
  std::string attr_s(const ox::NodeProto& n, const char* name, const std::string& def) {
    const auto* a = attr(n, name);
    return a ? a->s() : def;
  }
  std::optional<std::vector<int64_t>> attr_ints(const ox::NodeProto& n, const char* name) {
    const auto* a = attr(n, name);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }

  // ---- errors ----

  std::string where(const ox::NodeProto& n) {
    return "node '" + (n.name().empty() ? "#" + std::to_string(node_index_) : n.name()) + "'";
  }
  [[noreturn]] void unsupported(const ox::NodeProto& n, const std::string& why) {
    throw Error(ExitCode::Unsupported,
                "ONNX op " + n.op_type() + " (" + where(n) + "): " + why +
                    " — re-export the model without it, or convert the TorchScript export instead");
  }

  // ---- values ----

  bool has_input(const ox::NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }
  bool is_const(const std::string& name) { return consts_.count(name) != 0; }
  const at::Tensor* const_of(const ox::NodeProto& n, int i) {
    if (!has_input(n, i)) return nullptr;
    auto it = consts_.find(n.input(i));
    return it == consts_.end() ? nullptr : &it->second;
  }
  std::vector<int64_t> ints_of(const at::Tensor& t) {
    at::Tensor l = t.to(at::kLong).contiguous().flatten();
    return std::vector<int64_t>(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
  }
  std::vector<double> doubles_of(const at::Tensor& t) {
    at::Tensor l = t.to(at::kDouble).contiguous().flatten();
    return std::vector<double>(l.data_ptr<double>(), l.data_ptr<double>() + l.numel());
  }

  // The static shape of an ONNX value, when fully known.
  std::optional<std::vector<int64_t>> static_shape(const std::string& name) {
    auto c = consts_.find(name);
    if (c != consts_.end()) return c->second.sizes().vec();
    auto e = env_.find(name);
    const Type* t = nullptr;
    if (e != env_.end()) t = &e->second->type();
    auto it = types_.find(name);
    if ((!t || !t->shape) && it != types_.end()) t = &it->second;
    if (!t || !t->shape) return std::nullopt;
    for (int64_t d : *t->shape)
      if (d < 0) return std::nullopt;
    return *t->shape;
  }
  std::optional<int64_t> rank_of(const std::string& name) {
    auto c = consts_.find(name);
    if (c != consts_.end()) return c->second.dim();
    auto e = env_.find(name);
    if (e != env_.end() && e->second->type().shape) return static_cast<int64_t>(e->second->type().shape->size());
    auto it = types_.find(name);
    if (it != types_.end() && it->second.shape) return static_cast<int64_t>(it->second.shape->size());
    return std::nullopt;
  }

  // Note [Shapes ONNX inference leaves open]
  // ONNX shape inference runs without data propagation, so a value computed from a run-time
  // shape tensor has an unknown shape, often an unknown rank, in the file: the Reshape back to
  // Shape(x) of GroupNorm's InstanceNormalization pattern, a Resize to sizes made of
  // Shape/Slice/Concat, and everything after them. A Shape (or Size) of such a value would look
  // dynamic although every graph input is static. When the loader needs that shape, it runs
  // infer-shapes (the interpreter on meta tensors) over the IR lifted so far:
  // - static graph inputs: every lifted value gets its concrete shape, so the Shape folds to a
  //   constant exactly as it does when ONNX knew the shape;
  // - dynamic axes: one run with the dynamic dims set to kProbeDim gives the rank only; the
  //   types are put back, the values of unknown rank get that rank with all dims unknown, and the
  //   Shape becomes x.size(k) code (Note [Dynamic shapes]), which is right at any size.
  // A probe runs at most once per new IR node (cost: one meta run per probe, not per query).
  static constexpr int64_t kProbeDim = 3;

  bool inputs_static() const {
    for (Value* in : g_->inputs())
      if (!in->type().is_complete()) return false;
    return true;
  }

  // Runs infer-shapes over the IR lifted so far; false when nothing was lifted since the last
  // probe (the answer would be the same) or the graph inputs cannot be given shapes.
  bool probe_shapes() {
    Node* last = g_->block()->back();
    size_t count = g_->num_nodes();
    if (last == probed_last_ && count == probed_count_) return false;
    probed_last_ = last;
    probed_count_ = count;
    Diagnostics scratch;  // a probe that stops early is not the user's concern
    PassContext ctx(scratch);
    ++probes_;
    spdlog::debug("onnx: shape probe {} over {} lifted node(s) at node {}", probes_, count, node_index_);
    if (inputs_static()) {
      run_infer_shapes(*g_, ctx);
      return true;
    }
    std::vector<std::pair<Value*, Type>> saved;
    for (Value* in : g_->inputs()) saved.emplace_back(in, in->type());
    for (Node* nd = g_->block()->front(); nd; nd = nd->next())
      for (Value* o : nd->outputs()) saved.emplace_back(o, o->type());
    for (Value* in : g_->inputs())
      if (!in->type().is_tensor() || !in->type().shape || in->type().dtype == DType::Unknown)
        return false;  // no meta tensor to run it on
    for (Value* in : g_->inputs()) {
      Type t = in->type();
      for (int64_t& d : *t.shape)
        if (d < 0) d = kProbeDim;
      in->set_type(t);
    }
    try {
      run_infer_shapes(*g_, ctx);
    } catch (const std::exception& e) {
      spdlog::debug("onnx: shape probe failed: {}", first_line(e.what()));
    }
    std::vector<std::pair<Value*, size_t>> ranks;
    for (auto& [v, t] : saved)
      if (t.is_tensor() && !t.shape && v->type().is_tensor() && v->type().shape)
        ranks.emplace_back(v, v->type().shape->size());
    for (auto& [v, t] : saved) v->set_type(t);
    for (auto& [v, r] : ranks) {
      Type t = v->type();
      t.shape = std::vector<int64_t>(r, -1);
      v->set_type(t);
    }
    return true;
  }

  // static_shape, asking infer-shapes when ONNX left the shape of a lifted value open and the
  // graph inputs are static (Note [Shapes ONNX inference leaves open]).
  std::optional<std::vector<int64_t>> known_shape(const std::string& name) {
    auto s = static_shape(name);
    if (s || !env_.count(name) || !inputs_static() || !probe_shapes()) return s;
    return static_shape(name);
  }
  // rank_of, likewise (also with dynamic axes: the rank does not depend on them).
  std::optional<int64_t> known_rank(const std::string& name) {
    auto r = rank_of(name);
    if (r || !env_.count(name) || !probe_shapes()) return r;
    return rank_of(name);
  }

  Node* append(const std::string& op, const std::vector<Value*>& ins) {
    Node* n = g_->create(op, ins, 0);
    n->set_scope(scope_);
    g_->block()->append(n);
    return n;
  }
  Value* constant(AttrValue v, Type t) {
    Node* n = append("prim.Constant", {});
    n->attrs().set("value", std::move(v));
    return n->add_output(std::move(t));
  }
  Value* c_int(int64_t i) { return constant(i, Type::of(Type::Kind::Int)); }
  Value* c_float(double f) { return constant(f, Type::of(Type::Kind::Float)); }
  Value* c_bool(bool b) { return constant(b, Type::of(Type::Kind::Bool)); }
  Value* c_str(const std::string& s) { return constant(s, Type::of(Type::Kind::Str)); }
  Value* c_none() { return constant(NoneAttr{}, Type::of(Type::Kind::None)); }
  Value* c_ints(std::vector<int64_t> v) { return constant(std::move(v), Type::list(Type::of(Type::Kind::Int))); }
  Value* c_floats(std::vector<double> v) { return constant(std::move(v), Type::list(Type::of(Type::Kind::Float))); }

  Type type_for(const std::string& name) {
    auto it = types_.find(name);
    return it == types_.end() ? Type::tensor() : it->second;
  }

  // Registers a weight (once per ONNX constant) and returns its state_dict name.
  std::string weight_for(const std::string& onnx_name, const at::Tensor& t, bool is_param) {
    auto it = weight_names_.find(onnx_name);
    if (it != weight_names_.end()) return it->second;
    std::string name = g_->weights().unique_name(dotted_name(onnx_name));
    g_->weights().set(name, Weight{t.contiguous(), is_param});
    weight_names_[onnx_name] = name;
    return name;
  }

  // The IR value of an ONNX tensor: computed values, or constants materialised on first use
  // (small ones inline, larger ones as buffers/parameters read with prim.GetAttr).
  Value* tensor_in(const std::string& name) {
    auto e = env_.find(name);
    if (e != env_.end()) return e->second;
    auto c = consts_.find(name);
    if (c == consts_.end() && sym_.count(name))
      throw Error(ExitCode::Unsupported, "value '" + name + "' is a size computed from dynamic shapes and is used as a "
                                         "tensor, which tinytrace does not lift — export with static shapes");
    if (c == consts_.end())
      throw Error(ExitCode::BadInput, "value '" + name + "' is used but never defined — the ONNX graph is "
                                      "malformed; re-export it");
    const at::Tensor& t = c->second;
    Value* v;
    std::string saved = scope_;
    scope_.clear();
    if (t.numel() <= 8 && !init_names_.count(name)) {
      v = constant(t.clone(), Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())), t.sizes().vec()));
    } else {
      bool param = init_names_.count(name) && t.is_floating_point();
      Node* n = append("prim.GetAttr", {});
      n->set_weight("value", weight_for(name, t, param));
      v = n->add_output(Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())), t.sizes().vec()));
    }
    scope_ = saved;
    env_[name] = v;
    return v;
  }

  // For elementwise math: a one-element floating constant becomes a Python float (`x * 0.5`).
  Value* operand(const ox::NodeProto& n, int i, const std::string& other) {
    const at::Tensor* c = const_of(n, i);
    if (c && c->numel() == 1 && c->is_floating_point()) {
      auto r = rank_of(other);
      // A float32 constant reads back as its shortest decimal (0.7, not 0.699999988): the same
      // float32 value when it scales a float32 tensor.
      if (r && *r >= c->dim())
        return c_float(c->scalar_type() == at::kFloat ? nice_float(c->item<float>()) : c->item<double>());
    }
    return tensor_in(n.input(i));
  }

  void bind(const ox::NodeProto& n, int i, Value* v) {
    if (i >= n.output_size() || n.output(i).empty()) return;
    const std::string& name = n.output(i);
    auto it = types_.find(name);
    if (it != types_.end() && v->node()->owning_block() && !v->node()->is("prim.GetAttr") &&
        !v->node()->is("prim.Constant"))
      v->set_type(it->second);
    env_[name] = v;
  }
  Value* out(Node* node, const ox::NodeProto& n, int i = 0) {
    std::string name = i < n.output_size() ? n.output(i) : "";
    Value* v = node->add_output(name.empty() ? Type::tensor() : type_for(name), value_hint(name));
    bind(n, i, v);
    return v;
  }
  Node* call(const std::string& op, const std::vector<Value*>& ins, const ox::NodeProto& n) {
    Node* node = append(op, ins);
    out(node, n, 0);
    return node;
  }

  // ---- module paths ----

  // "/layer2/layer2.0/downsample/downsample.0/Conv" -> "layer2.0.downsample.0" (the exporter
  // writes each level's name relative to its parent, sometimes with the parent's name in front).
  static std::string path_from_node_name(const std::string& node_name) {
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
  std::string module_path(const ox::NodeProto& n, const std::string& weight, const std::string& fallback) {
    auto shared = module_of_weight_.find(weight);
    if (!weight.empty() && shared != module_of_weight_.end()) return shared->second;
    std::string path;
    const std::string suffix = ".weight";
    if (weight.size() > suffix.size() && weight.compare(weight.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        weight.find("::") == std::string::npos && weight.find('/') == std::string::npos)
      path = dotted_name(weight.substr(0, weight.size() - suffix.size()));
    if (path.empty()) path = path_from_node_name(n.name());
    if (path.empty() && !n.name().empty()) path = sanitize_name(n.name());
    if (path.empty()) path = fallback;
    std::string unique = path;
    for (int k = 1; used_modules_.count(unique) || g_->weights().has(unique); ++k) unique = path + "_" + std::to_string(k);
    used_modules_.insert(unique);
    if (!weight.empty()) module_of_weight_[weight] = unique;
    return unique;
  }

  // Registers `t` as <module>.<key> and refers to it from `node`.
  void module_weight(Node* node, const std::string& key, const at::Tensor& t, bool is_param) {
    std::string name = node->module() + "." + key;
    if (!g_->weights().has(name)) g_->weights().set(name, Weight{t.contiguous(), is_param});
    node->set_weight(key, name);
  }

  // ---- lifting ----

  void lift(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      unsupported(n, "operators of domain '" + n.domain() + "' have no PyTorch mapping");
    scope_ = path_from_node_name(n.name());
    if (op == "Constant") return lift_constant(n);
    if (try_fold(n)) return;
    if (try_symbolic(n)) return;
    if (op == "Expand" && const_of(n, 1) && const_of(n, 1)->dim() == 1) {
      std::vector<Value*> shape;
      for (int64_t d : ints_of(*const_of(n, 1))) shape.push_back(c_int(d));
      return lift_expand(n, shape);
    }
    if (op == "Identity" || op == "Dropout") {
      if (n.output_size() > 1 && !n.output(1).empty() && !consumers_[n.output(1)].empty())
        unsupported(n, "the dropout mask is used");
      if (is_const(n.input(0))) consts_[n.output(0)] = consts_[n.input(0)];
      else bind(n, 0, tensor_in(n.input(0)));
      return;
    }
    if (op == "Conv" || op == "ConvTranspose") return lift_conv(n, op == "ConvTranspose");
    if (op == "Gemm") return lift_gemm(n);
    if (op == "MatMul") return lift_matmul(n);
    if (op == "BatchNormalization") return lift_batch_norm(n);
    if (op == "MaxPool" || op == "AveragePool") return lift_pool(n, op == "MaxPool");
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return lift_global_pool(n, op == "GlobalMaxPool");
    if (op == "Relu") return void(call("F.relu", {tensor_in(n.input(0))}, n));
    if (op == "Sigmoid") return void(call("torch.sigmoid", {tensor_in(n.input(0))}, n));
    if (op == "Tanh") return void(call("torch.tanh", {tensor_in(n.input(0))}, n));
    if (op == "HardSwish") return void(call("F.hardswish", {tensor_in(n.input(0))}, n));
    if (op == "HardSigmoid") return lift_hard_sigmoid(n);
    if (op == "LeakyRelu")
      return void(call("F.leaky_relu", {tensor_in(n.input(0)), c_float(attr_f(n, "alpha", 0.01))}, n));
    if (op == "Elu")
      return void(call("F.elu", {tensor_in(n.input(0)), c_float(attr_f(n, "alpha", 1.0)), c_int(1), c_int(1)}, n));
    if (op == "Gelu")
      return void(call("F.gelu", {tensor_in(n.input(0)), c_str(attr_s(n, "approximate", "none"))}, n));
    if (op == "Clip") return lift_clip(n);
    if (op == "Softmax" || op == "LogSoftmax") return lift_softmax(n, op == "LogSoftmax");
    if (op == "Flatten") return lift_flatten(n);
    if (op == "Reshape") return lift_reshape(n);
    if (op == "Transpose") return lift_transpose(n);
    if (op == "Concat") return lift_concat(n);
    if (op == "Split") return lift_split(n);
    if (op == "Slice") return lift_slice(n);
    if (op == "Pad") return lift_pad(n);
    if (op == "Resize" || op == "Upsample") return lift_resize(n);
    if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" || op == "ReduceL1" ||
        op == "ReduceL2" || op == "ReduceSumSquare")
      return lift_reduce(n);
    if (op == "Unsqueeze" || op == "Squeeze") return lift_squeeze(n, op == "Unsqueeze");
    if (op == "Gather") return lift_gather(n);
    if (op == "Cast") return lift_cast(n);
    if (op == "PRelu") return lift_prelu(n);
    if (op == "InstanceNormalization") {
      // GroupNorm and InstanceNorm export as this op; its scale/bias are plain tensors here.
      Value* x = tensor_in(n.input(0));
      return void(call("F.instance_norm", {x, tensor_in(n.input(1)), tensor_in(n.input(2)), c_none(), c_none(),
                                           c_bool(true), c_float(0.1), c_float(attr_f(n, "epsilon", 1e-5)), c_bool(false)},
                       n));
    }
    if (op == "LayerNormalization") return lift_layer_norm(n);
    if (op == "DepthToSpace") {
      if (attr_s(n, "mode", "DCR") != "CRD") unsupported(n, "DCR mode (PyTorch's pixel_shuffle is CRD)");
      return void(call("F.pixel_shuffle", {tensor_in(n.input(0)), c_int(attr_i(n, "blocksize", 1))}, n));
    }
    if (op == "Mul") return lift_mul(n);
    if (op == "Add" || op == "Sub" || op == "Div" || op == "Pow") return lift_binary(n);
    static const std::map<std::string, const char*> unary = {
        {"Sqrt", "torch.sqrt"}, {"Exp", "torch.exp"},     {"Log", "torch.log"},
        {"Abs", "torch.abs"},   {"Neg", "torch.neg"},     {"Erf", "torch.erf"},
        {"Reciprocal", "torch.reciprocal"}, {"Floor", "torch.floor"}, {"Ceil", "torch.ceil"},
        {"Sin", "torch.sin"},   {"Cos", "torch.cos"},     {"Not", "torch.logical_not"},
        {"Sign", "torch.sign"}, {"Round", "torch.round"}};  // both round half to even
    auto u = unary.find(op);
    if (u != unary.end()) return void(call(u->second, {tensor_in(n.input(0))}, n));
    if (op == "Max" || op == "Min") return lift_max_min(n, op == "Max");
    if (op == "Softplus")  // ONNX has no threshold; above torch's 20 the two differ by < 1e-8
      return void(call("F.softplus", {tensor_in(n.input(0)), c_int(1), c_int(20)}, n));
    if (op == "Selu") return lift_selu(n);
    if (op == "Greater" || op == "Less" || op == "Equal" || op == "GreaterOrEqual" || op == "LessOrEqual")
      return lift_compare(n);
    if (op == "Where") return lift_where(n);
    if (op == "Mod") {
      // fmod=0 takes the divisor's sign (Python %), fmod=1 the dividend's (C fmod).
      const char* f = attr_i(n, "fmod", 0) ? "torch.fmod" : "torch.remainder";
      return void(call(f, {tensor_in(n.input(0)), operand(n, 1, n.input(0))}, n));
    }
    if (op == "CumSum") return lift_cumsum(n);
    if (op == "ArgMax" || op == "ArgMin") {
      if (attr_i(n, "select_last_index", 0)) unsupported(n, "select_last_index=1 (torch returns the first index)");
      return void(call(op == "ArgMax" ? "torch.argmax" : "torch.argmin",
                       {tensor_in(n.input(0)), c_int(attr_i(n, "axis", 0)), c_bool(attr_i(n, "keepdims", 1) != 0)}, n));
    }
    if (op == "TopK") return lift_topk(n);
    if (op == "Tile") {
      const at::Tensor* reps = const_of(n, 1);
      if (!reps) unsupported(n, "repeats computed at run time");
      return void(call("Tensor.repeat", {tensor_in(n.input(0)), c_ints(ints_of(*reps))}, n));
    }
    if (op == "Einsum") {
      std::vector<Value*> xs;
      for (int i = 0; i < n.input_size(); ++i) xs.push_back(tensor_in(n.input(i)));
      return void(call("torch.einsum", {c_str(attr_s(n, "equation", "")), list_of(xs), c_none()}, n));
    }
    if (op == "GatherElements") {
      // torch.gather has no negative indices; the exporter writes them non-negative.
      return void(call("torch.gather", {tensor_in(n.input(0)), c_int(attr_i(n, "axis", 0)), tensor_in(n.input(1)),
                                        c_bool(false)},
                       n));
    }
    if (op == "LSTM" || op == "GRU") return lift_rnn(n);
    if (op == "RNN") unsupported(n, "plain RNN layers are not lifted from ONNX yet");
    // What reaches here has inputs that are neither constants nor sizes of dynamic shapes
    // (try_fold and try_symbolic took those).
    if (op == "Shape") unsupported(n, "the shape of a value of unknown rank (export with static shapes)");
    if (op == "Range" || op == "ConstantOfShape" || op == "Expand")
      unsupported(n, "a shape or bound computed from tensor values at run time, which a PyTorch module cannot "
                     "take as a size");
    unsupported(n, "no PyTorch mapping");
  }

  // Max/Min: variadic and broadcasting, folded left as torch.maximum/torch.minimum.
  void lift_max_min(const ox::NodeProto& n, bool max) {
    std::vector<Value*> xs;
    for (int i = 0; i < n.input_size(); ++i)
      if (has_input(n, i)) xs.push_back(tensor_in(n.input(i)));
    if (xs.empty()) unsupported(n, "no inputs");
    if (xs.size() == 1) return bind(n, 0, xs[0]);
    const char* f = max ? "torch.maximum" : "torch.minimum";
    Value* acc = xs[0];
    for (size_t k = 1; k + 1 < xs.size(); ++k) acc = method(f, {acc, xs[k]});
    call(f, {acc, xs.back()}, n);
  }

  void lift_selu(const ox::NodeProto& n) {
    // torch's constants, as the float32 attributes ONNX stores them.
    const float alpha = 1.67326319217681884765625f, gamma = 1.05070102214813232421875f;
    const auto* a = attr(n, "alpha");
    const auto* g = attr(n, "gamma");
    Value* x = tensor_in(n.input(0));
    if ((!a || a->f() == alpha) && (!g || g->f() == gamma)) return void(call("F.selu", {x}, n));
    // gamma * elu(x, alpha)
    Value* e = method("F.elu", {x, c_float(attr_f(n, "alpha", alpha)), c_int(1), c_int(1)});
    call("torch.mul", {e, c_float(attr_f(n, "gamma", gamma))}, n);
  }

  void lift_compare(const ox::NodeProto& n) {
    static const std::map<std::string, std::pair<const char*, const char*>> ops = {
        // op -> (torch op, the same comparison with the operands swapped)
        {"Greater", {"torch.gt", "torch.lt"}}, {"Less", {"torch.lt", "torch.gt"}},
        {"GreaterOrEqual", {"torch.ge", "torch.le"}}, {"LessOrEqual", {"torch.le", "torch.ge"}},
        {"Equal", {"torch.eq", "torch.eq"}}};
    const auto& f = ops.at(n.op_type());
    Value* a = operand(n, 0, n.input(1));
    Value* b = operand(n, 1, n.input(0));
    if (a->type().kind == Type::Kind::Float) return void(call(f.second, {b, a}, n));  // 0.5 < x -> x > 0.5
    call(f.first, {a, b}, n);
  }

  // Where(c, v, x) with a one-element constant v and the result shaped like x is how
  // x.masked_fill(c, v) exports; anything else is torch.where.
  void lift_where(const ox::NodeProto& n) {
    const at::Tensor* v = const_of(n, 1);
    auto out_shape = static_shape(n.output(0));
    if (v && v->numel() == 1 && !is_const(n.input(2)) && out_shape && out_shape == static_shape(n.input(2))) {
      Value* fill = v->is_floating_point() ? c_float(v->item<double>()) : c_int(v->item<int64_t>());
      if (v->scalar_type() == at::kBool) fill = c_bool(v->item<bool>());
      return void(call("Tensor.masked_fill", {tensor_in(n.input(2)), tensor_in(n.input(0)), fill}, n));
    }
    call("torch.where", {tensor_in(n.input(0)), tensor_in(n.input(1)), tensor_in(n.input(2))}, n);
  }

  void lift_cumsum(const ox::NodeProto& n) {
    const at::Tensor* ax = const_of(n, 1);
    if (!ax || ax->numel() != 1) unsupported(n, "an axis computed at run time");
    int64_t axis = ints_of(*ax)[0];
    bool reverse = attr_i(n, "reverse", 0) != 0, exclusive = attr_i(n, "exclusive", 0) != 0;
    Value* x = tensor_in(n.input(0));
    // reverse: flip, sum, flip back; exclusive: the inclusive sum minus the element itself.
    Value* y = reverse ? method("torch.flip", {x, c_ints({axis})}) : x;
    y = method("torch.cumsum", {y, c_int(axis), c_none()});
    if (reverse) y = method("torch.flip", {y, c_ints({axis})});
    if (exclusive) y = method("torch.sub", {y, x, c_int(1)});
    bind(n, 0, y);
  }

  void lift_topk(const ox::NodeProto& n) {
    int64_t k = 0;
    if (opset_ < 10) {
      k = attr_i(n, "k", 0);
    } else {
      const at::Tensor* kt = const_of(n, 1);
      if (!kt || kt->numel() != 1) unsupported(n, "k computed at run time");
      k = ints_of(*kt)[0];
    }
    Node* node = append("torch.topk", {tensor_in(n.input(0)), c_int(k), c_int(attr_i(n, "axis", -1)),
                                       c_bool(attr_i(n, "largest", 1) != 0), c_bool(attr_i(n, "sorted", 1) != 0)});
    out(node, n, 0);
    out(node, n, 1);
  }

  void lift_constant(const ox::NodeProto& n) {
    at::Tensor t;
    if (const auto* a = attr(n, "value")) t = to_tensor(a->t());
    else if (const auto* a = attr(n, "value_float")) t = at::scalar_tensor(a->f(), at::kFloat);
    else if (const auto* a = attr(n, "value_int")) t = at::scalar_tensor(a->i(), at::kLong);
    else if (const auto* a = attr(n, "value_floats")) t = at::tensor(std::vector<float>(a->floats().begin(), a->floats().end()));
    else if (const auto* a = attr(n, "value_ints")) t = at::tensor(std::vector<int64_t>(a->ints().begin(), a->ints().end()));
    else unsupported(n, "a Constant without a tensor/float/int value");
    consts_[n.output(0)] = t;
  }

  // Folds nodes whose inputs are all constant (shape sub-graphs).
  bool try_fold(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    static const std::set<std::string> foldable = {
        "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Reshape", "Cast", "Slice", "Add", "Sub",
        "Mul", "Div", "Identity", "ConstantOfShape", "Range", "Equal", "Where", "Expand", "Transpose",
        "Floor", "Ceil", "Sqrt", "Neg", "ReduceProd", "Flatten", "Size"};
    if (!foldable.count(op)) return false;
    if (op == "Shape" || op == "Size") {
      auto s = known_shape(n.input(0));
      if (!s) return false;
      at::Tensor t = at::tensor(*s, at::kLong);
      if (op == "Size") {
        consts_[n.output(0)] = t.prod();
        return true;
      }
      int64_t r = static_cast<int64_t>(s->size());
      int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", r);
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, start, r);
      consts_[n.output(0)] = t.slice(0, start, end);
      return true;
    }
    std::vector<at::Tensor> in;
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty()) {
        in.emplace_back();
        continue;
      }
      auto it = consts_.find(n.input(i));
      if (it == consts_.end()) return false;
      in.push_back(it->second);
    }
    if (in.empty()) {
      if (op != "ConstantOfShape") return false;
    }
    at::Tensor r;
    auto axes_of = [&](int input_index) -> std::vector<int64_t> {
      if (auto a = attr_ints(n, "axes")) return *a;
      if (static_cast<int>(in.size()) > input_index && in[input_index].defined()) return ints_of(in[input_index]);
      return {};
    };
    if (op == "Gather") {
      int64_t axis = attr_i(n, "axis", 0);
      at::Tensor idx = in[1].to(at::kLong);
      int64_t dim = in[0].size(axis < 0 ? axis + in[0].dim() : axis);
      idx = at::where(idx < 0, idx + dim, idx);
      r = at::index_select(in[0], axis, idx.flatten()).reshape([&] {
        std::vector<int64_t> s;
        int64_t a = axis < 0 ? axis + in[0].dim() : axis;
        for (int64_t k = 0; k < a; ++k) s.push_back(in[0].size(k));
        for (int64_t k : idx.sizes()) s.push_back(k);
        for (int64_t k = a + 1; k < in[0].dim(); ++k) s.push_back(in[0].size(k));
        return s;
      }());
    } else if (op == "Unsqueeze") {
      auto axes = axes_of(1);
      int64_t outr = in[0].dim() + static_cast<int64_t>(axes.size());
      for (auto& a : axes) if (a < 0) a += outr;
      std::sort(axes.begin(), axes.end());
      r = in[0];
      for (int64_t a : axes) r = r.unsqueeze(a);
    } else if (op == "Squeeze") {
      auto axes = axes_of(1);
      if (axes.empty()) {
        r = in[0].squeeze();
      } else {
        for (auto& a : axes) if (a < 0) a += in[0].dim();
        std::sort(axes.rbegin(), axes.rend());
        r = in[0];
        for (int64_t a : axes) r = r.squeeze(a);
      }
    } else if (op == "Concat") {
      std::vector<at::Tensor> parts;
      for (auto& t : in) if (t.defined()) parts.push_back(t);
      r = at::cat(parts, attr_i(n, "axis", 0));
    } else if (op == "Reshape") {
      auto shape = ints_of(in[1]);
      for (size_t k = 0; k < shape.size(); ++k)
        if (shape[k] == 0 && attr_i(n, "allowzero", 0) == 0) shape[k] = in[0].size(static_cast<int64_t>(k));
      r = in[0].reshape(shape);
    } else if (op == "Flatten") {
      int64_t axis = attr_i(n, "axis", 1);
      if (axis < 0) axis += in[0].dim();
      int64_t lead = 1;
      for (int64_t k = 0; k < axis; ++k) lead *= in[0].size(k);
      r = in[0].reshape({lead, -1});
    } else if (op == "Cast") {
      auto st = scalar_type(static_cast<int32_t>(attr_i(n, "to", 1)));
      if (!st) return false;
      r = in[0].to(*st);
    } else if (op == "Slice") {
      std::vector<int64_t> starts, ends, axes, steps;
      if (opset_ < 10) {
        starts = attr_ints(n, "starts").value_or(std::vector<int64_t>{});
        ends = attr_ints(n, "ends").value_or(std::vector<int64_t>{});
        axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
      } else {
        starts = ints_of(in[1]);
        ends = ints_of(in[2]);
        if (in.size() > 3 && in[3].defined()) axes = ints_of(in[3]);
        if (in.size() > 4 && in[4].defined()) steps = ints_of(in[4]);
      }
      r = in[0];
      for (size_t k = 0; k < starts.size(); ++k) {
        int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
        if (a < 0) a += r.dim();
        int64_t st = steps.empty() ? 1 : steps[k];
        if (st == 0) return false;
        // ONNX clamping rules (negative steps run from the end, as in F.pad's sub-graph).
        int64_t dim = r.size(a);
        int64_t s0 = starts[k] < 0 ? starts[k] + dim : starts[k];
        int64_t e0 = ends[k] < 0 ? ends[k] + dim : ends[k];
        if (st > 0) {
          s0 = std::clamp<int64_t>(s0, 0, dim);
          e0 = std::clamp<int64_t>(e0, 0, dim);
        } else {
          s0 = std::clamp<int64_t>(s0, 0, dim - 1);
          e0 = std::clamp<int64_t>(e0, -1, dim - 1);
        }
        r = at::index_select(r, a, at::arange(s0, e0, st, at::kLong));
      }
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      if (op == "Add") r = in[0] + in[1];
      if (op == "Sub") r = in[0] - in[1];
      if (op == "Mul") r = in[0] * in[1];
      if (op == "Div") r = in[0].is_floating_point() ? in[0] / in[1] : at::div(in[0], in[1], "trunc");
      r = r.to(in[0].scalar_type());
    } else if (op == "Identity") {
      r = in[0];
    } else if (op == "ConstantOfShape") {
      std::vector<int64_t> shape = in.empty() ? std::vector<int64_t>{} : ints_of(in[0]);
      at::Tensor v = at::zeros({1}, at::kFloat);
      if (const auto* a = attr(n, "value")) v = to_tensor(a->t());
      r = at::full(shape, 0, v.options()).fill_(v.flatten()[0]);
    } else if (op == "Range") {
      r = at::arange(in[0].item<double>(), in[1].item<double>(), in[2].item<double>(), in[0].options());
    } else if (op == "Equal") {
      r = at::eq(in[0], in[1]);
    } else if (op == "Where") {
      r = at::where(in[0], in[1], in[2]);
    } else if (op == "Expand") {
      auto shape = ints_of(in[1]);
      r = in[0] * at::ones(shape, in[0].options());
    } else if (op == "Transpose") {
      std::vector<int64_t> perm = attr_ints(n, "perm").value_or(std::vector<int64_t>{});
      if (perm.empty())
        for (int64_t k = in[0].dim() - 1; k >= 0; --k) perm.push_back(k);
      r = in[0].permute(perm).contiguous();
    } else if (op == "Floor" || op == "Ceil" || op == "Sqrt" || op == "Neg") {
      r = op == "Floor" ? in[0].floor() : op == "Ceil" ? in[0].ceil() : op == "Sqrt" ? in[0].sqrt() : in[0].neg();
    } else if (op == "ReduceProd") {
      r = in[0].prod().to(in[0].scalar_type());
    } else {
      return false;
    }
    consts_[n.output(0)] = r.contiguous();
    return true;
  }

  // ---- dynamic shape sub-graphs ----
  //
  // Note [Dynamic shapes]
  // With dynamic axes exported, Shape/Gather/Unsqueeze/Concat/... chains on int64 shape tensors
  // cannot be folded. Such a value is kept as a list of Python ints (IR values: Tensor.size
  // results and constants), which is how the TorchScript loader sees `x.view(x.size(0), -1)`;
  // Reshape/Expand/ConstantOfShape then take it as a prim.ListConstruct of ints, Resize as
  // F.interpolate's size, Range as torch.arange's bounds. Arithmetic on two static sizes folds.

  Value* size_of(const std::string& name, int64_t dim) {
    Type t = type_for(name);
    if (t.shape && dim < static_cast<int64_t>(t.shape->size()) && (*t.shape)[static_cast<size_t>(dim)] >= 0)
      return c_int((*t.shape)[static_cast<size_t>(dim)]);
    Node* n = append("Tensor.size", {tensor_in(name), c_int(dim)});
    return n->add_output(Type::of(Type::Kind::Int));
  }

  // The elements of a symbolic or constant int shape tensor (nullopt: neither).
  std::optional<std::vector<Value*>> sym_elems(const ox::NodeProto& n, int i) {
    if (!has_input(n, i)) return std::nullopt;
    auto s = sym_.find(n.input(i));
    if (s != sym_.end()) return s->second;
    const at::Tensor* c = const_of(n, i);
    if (!c || c->is_floating_point() || c->dim() > 1) return std::nullopt;
    std::vector<Value*> out;
    for (int64_t v : ints_of(*c)) out.push_back(c_int(v));
    return out;
  }
  bool is_sym(const ox::NodeProto& n, int i) { return has_input(n, i) && sym_.count(n.input(i)); }
  std::optional<int64_t> int_const(Value* v) {
    const AttrValue* a = v->constant();
    if (a && std::holds_alternative<int64_t>(*a)) return std::get<int64_t>(*a);
    return std::nullopt;
  }
  Value* int_list(const std::vector<Value*>& elems) {
    std::vector<int64_t> ints;
    for (Value* e : elems) {
      auto c = int_const(e);
      if (!c) {
        Node* l = append("prim.ListConstruct", elems);
        return l->add_output(Type::list(Type::of(Type::Kind::Int)));
      }
      ints.push_back(*c);
    }
    return c_ints(ints);
  }
  void set_sym(const ox::NodeProto& n, std::vector<Value*> elems, bool scalar) {
    sym_[n.output(0)] = std::move(elems);
    if (scalar) sym_scalar_.insert(n.output(0));
  }

  // Lifts a shape computation on symbolic values; false when `n` does not involve one.
  bool try_symbolic(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    if (op == "Shape") {
      auto r = known_rank(n.input(0));
      if (!r) return false;
      int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", *r);
      if (start < 0) start += *r;
      if (end < 0) end += *r;
      start = std::clamp<int64_t>(start, 0, *r);
      end = std::clamp<int64_t>(end, start, *r);
      std::vector<Value*> elems;
      for (int64_t k = start; k < end; ++k) elems.push_back(size_of(n.input(0), k));
      set_sym(n, elems, false);
      return true;
    }
    bool any = false;
    for (int i = 0; i < n.input_size(); ++i) any = any || is_sym(n, i);
    if (!any) return false;
    auto elems = [&](int i) {
      auto e = sym_elems(n, i);
      if (!e) unsupported(n, "a shape computation mixing dynamic sizes with tensors");
      return *e;
    };
    if (op == "Identity" || op == "Cast") {
      if (op == "Cast") {
        auto st = scalar_type(static_cast<int32_t>(attr_i(n, "to", 7)));
        if (!st || (*st != at::kLong && *st != at::kInt)) unsupported(n, "a cast of a dynamic size to a non-integer type");
      }
      set_sym(n, elems(0), sym_scalar_.count(n.input(0)) != 0);
      return true;
    }
    if (op == "Gather" && !is_sym(n, 1)) {
      const at::Tensor* idx = const_of(n, 1);
      if (!idx || attr_i(n, "axis", 0) != 0 || idx->dim() > 1) unsupported(n, "a gather from a dynamic shape");
      auto src = elems(0);
      std::vector<Value*> out;
      for (int64_t k : ints_of(*idx)) {
        int64_t kk = k < 0 ? k + static_cast<int64_t>(src.size()) : k;
        if (kk < 0 || kk >= static_cast<int64_t>(src.size())) unsupported(n, "an index out of range");
        out.push_back(src[static_cast<size_t>(kk)]);
      }
      set_sym(n, out, idx->dim() == 0);
      return true;
    }
    if ((op == "Unsqueeze" || op == "Squeeze") && !is_sym(n, 1)) {
      auto axes = const_axes(n).value_or(std::vector<int64_t>{0});
      bool scalar = sym_scalar_.count(n.input(0)) != 0;
      if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1) || scalar != (op == "Unsqueeze"))
        unsupported(n, "an unexpected reshaping of a dynamic size");
      auto e = elems(0);
      if (op == "Squeeze" && e.size() != 1) unsupported(n, "an unexpected reshaping of a dynamic size");
      set_sym(n, e, op == "Squeeze");
      return true;
    }
    if (op == "Concat") {
      std::vector<Value*> out;
      for (int i = 0; i < n.input_size(); ++i) {
        if (n.input(i).empty()) continue;
        if (sym_scalar_.count(n.input(i))) unsupported(n, "a concatenation of 0-d sizes");
        auto e = elems(i);
        out.insert(out.end(), e.begin(), e.end());
      }
      set_sym(n, out, false);
      return true;
    }
    if (op == "Slice" && opset_ >= 10 && !is_sym(n, 1) && !is_sym(n, 2)) {
      auto src = elems(0);
      const at::Tensor* st = const_of(n, 1);
      const at::Tensor* en = const_of(n, 2);
      if (!st || !en || st->numel() != 1 || (has_input(n, 4) && (!const_of(n, 4) || ints_of(*const_of(n, 4))[0] != 1)))
        unsupported(n, "a slice of a dynamic shape with run-time bounds");
      int64_t len = static_cast<int64_t>(src.size());
      int64_t s0 = ints_of(*st)[0], e0 = ints_of(*en)[0];
      if (s0 < 0) s0 += len;
      if (e0 < 0) e0 += len;
      s0 = std::clamp<int64_t>(s0, 0, len);
      e0 = std::clamp<int64_t>(e0, s0, len);
      set_sym(n, std::vector<Value*>(src.begin() + s0, src.begin() + e0), false);
      return true;
    }
    static const std::map<std::string, const char*> arith = {
        {"Add", "operator.add"}, {"Sub", "operator.sub"}, {"Mul", "operator.mul"}, {"Div", "operator.floordiv"}};
    if (auto a = arith.find(op); a != arith.end()) {
      auto x = elems(0), y = elems(1);
      if (x.size() != y.size() && x.size() != 1 && y.size() != 1) unsupported(n, "arithmetic on sizes of different lengths");
      size_t len = std::max(x.size(), y.size());
      std::vector<Value*> out;
      for (size_t k = 0; k < len; ++k) {
        Value* p = x[x.size() == 1 ? 0 : k];
        Value* q = y[y.size() == 1 ? 0 : k];
        auto pc = int_const(p), qc = int_const(q);
        if (op == "Mul" && pc == 1) out.push_back(q);
        else if ((op == "Mul" || op == "Div") && qc == 1) out.push_back(p);
        else if ((op == "Add" || op == "Sub") && qc == 0) out.push_back(p);
        else if (pc && qc && (op != "Div" || *qc != 0))  // static sizes next to dynamic ones
          out.push_back(c_int(op == "Add" ? *pc + *qc : op == "Sub" ? *pc - *qc : op == "Mul" ? *pc * *qc : *pc / *qc));
        else out.push_back(append(a->second, {p, q})->add_output(Type::of(Type::Kind::Int)));
      }
      bool scalar = sym_scalar_.count(n.input(0)) && (!is_sym(n, 1) ? const_of(n, 1)->dim() == 0 : sym_scalar_.count(n.input(1)));
      set_sym(n, out, scalar);
      return true;
    }
    if (op == "Reshape" && is_sym(n, 1) && !is_sym(n, 0)) {
      auto e = elems(1);
      for (size_t k = 0; k < e.size(); ++k)
        if (int_const(e[k]) == 0 && attr_i(n, "allowzero", 0) == 0) e[k] = size_of(n.input(0), static_cast<int64_t>(k));
      call("Tensor.reshape", {tensor_in(n.input(0)), int_list(e)}, n);
      return true;
    }
    if (op == "Expand" && is_sym(n, 1) && !is_sym(n, 0)) {
      lift_expand(n, elems(1));
      return true;
    }
    if (op == "ConstantOfShape") {
      at::Tensor v = at::zeros({1}, at::kFloat);
      if (const auto* a = attr(n, "value")) v = to_tensor(a->t());
      DType d = dtype_from_scalar_type(static_cast<int64_t>(v.scalar_type()));
      Value* z = method("torch.zeros", {int_list(elems(0)), constant(d, Type::of(Type::Kind::ScalarType)), c_none(),
                                         c_none(), c_none()});
      if (v.flatten()[0].item<double>() == 0.0) {
        bind(n, 0, z);
        return true;
      }
      call("torch.add", {z, c_float(v.flatten()[0].item<double>()), c_int(1)}, n);
      return true;
    }
    if (op == "Range") {
      // torch.arange(x.size(0)): scalar bounds, some of them run-time sizes.
      auto a = elems(0), b = elems(1), d = elems(2);
      if (a.size() != 1 || b.size() != 1 || d.size() != 1) unsupported(n, "a range with non-scalar bounds");
      DType dt = type_for(n.output(0)).dtype;
      if (dt == DType::Unknown) dt = dtype_from_scalar_type(static_cast<int64_t>(at::kLong));
      call("torch.arange", {a[0], b[0], d[0], constant(dt, Type::of(Type::Kind::ScalarType)), c_none(), c_none(), c_none()},
           n);
      return true;
    }
    if (op == "Resize" && opset_ >= 11 && is_sym(n, 3) && !is_sym(n, 0) && !is_sym(n, 1) && !is_sym(n, 2)) {
      // F.interpolate(x, size=x.shape[-2:]) with dynamic axes: the sizes are run-time ints.
      lift_resize(n, elems(3));
      return true;
    }
    unsupported(n, "a shape computation on dynamic shapes that tinytrace cannot lift");
  }

  // ONNX Expand broadcasts both ways: a 1 in the shape keeps the input's size (-1 for
  // Tensor.expand) except in new leading dims.
  void lift_expand(const ox::NodeProto& n, std::vector<Value*> shape) {
    auto r = known_rank(n.input(0));
    if (!r) unsupported(n, "an expand of a value of unknown rank");
    int64_t lead = static_cast<int64_t>(shape.size()) - *r;
    if (lead < 0) unsupported(n, "an expand to fewer dims than the input has");
    for (size_t k = static_cast<size_t>(lead); k < shape.size(); ++k)
      if (int_const(shape[k]) == 1) shape[k] = c_int(-1);
    call("Tensor.expand", {tensor_in(n.input(0)), int_list(shape), c_bool(false)}, n);
  }

  // ---- recurrent layers ----
  //
  // Note [ONNX LSTM/GRU]
  // torch.onnx.export writes an nn.LSTM/nn.GRU as one ONNX LSTM/GRU node per layer, wrapped in
  // Transpose (batch_first), Squeeze (unidirectional Y) or Transpose+Reshape (bidirectional Y),
  // Slice (per-layer initial states) and Concat (per-layer final states). The whole chain becomes
  // the one module op the TorchScript loader produces (nn.LSTM with a Tuple output and
  // prim.TupleUnpack nodes), with the weights converted to PyTorch's layout and gate order.

  int sole_consumer(const std::string& name) {
    int found = -1;
    for (int c : consumers_[name]) {
      if (c < 0) return -1;  // a graph output
      const ox::NodeProto& u = model_.graph().node(c);
      // Shape reads of a statically shaped value fold away (the zero initial states).
      if (u.op_type() == "Shape" && static_shape(name)) continue;
      if (found >= 0 && found != c) return -1;
      found = c;
    }
    return found;
  }

  // Folds the constant sub-graph that computes `name` ahead of its turn (the exporter places the
  // constants a later layer or wrapper node uses after the first layer); false when not constant.
  bool fold_ahead(const std::string& name, int depth = 0) {
    if (name.empty() || consts_.count(name)) return !name.empty();
    if (env_.count(name) || sym_.count(name) || depth > 64) return false;
    auto p = producer_.find(name);
    if (p == producer_.end() || p->second <= node_index_ || skip_.count(p->second)) return false;
    const ox::NodeProto& n = model_.graph().node(p->second);
    bool shape = n.op_type() == "Shape" || n.op_type() == "Size";
    if (!shape)
      for (const auto& in : n.input())
        if (!in.empty() && !fold_ahead(in, depth + 1)) return false;
    bool ok = false;
    if (n.op_type() == "Constant") {
      lift_constant(n);
      ok = true;
    } else {
      ok = try_fold(n);
    }
    if (ok) skip_.insert(p->second);
    return ok;
  }
  const at::Tensor* const_ahead(const ox::NodeProto& n, int i) {
    if (!has_input(n, i) || !fold_ahead(n.input(i))) return nullptr;
    return const_of(n, i);
  }

  // The constant axes of Squeeze/Unsqueeze (attribute before opset 13, input after).
  std::optional<std::vector<int64_t>> const_axes(const ox::NodeProto& n) {
    if (auto a = attr_ints(n, "axes")) return a;
    if (const at::Tensor* t = const_ahead(n, 1)) return ints_of(*t);
    return std::nullopt;
  }

  bool is_zero_const(const std::string& name) {
    fold_ahead(name);
    auto c = consts_.find(name);
    return c != consts_.end() && c->second.numel() > 0 && !c->second.ne(0).any().item<bool>();
  }

  // A lifted value that is zeros of a run-time shape (the exporter's initial state with a dynamic
  // batch): torch.zeros(...), or an all-zero constant expanded.
  bool ir_zeros(const std::string& name) {
    auto e = env_.find(name);
    if (e == env_.end()) return false;
    Node* p = e->second->node();
    if (p->is("torch.zeros")) return true;
    if (!p->is("Tensor.expand")) return false;
    const AttrValue* c = p->input(0)->constant();
    if (!c || !std::holds_alternative<at::Tensor>(*c)) return false;
    const at::Tensor& t = std::get<at::Tensor>(*c);
    return t.numel() > 0 && !t.ne(0).any().item<bool>();
  }

  // PyTorch gate blocks from ONNX ones along dim 0: LSTM iofc -> ifgo, GRU zrh -> rzn.
  static at::Tensor reorder_gates(const at::Tensor& t, bool lstm) {
    int64_t gates = lstm ? 4 : 3;
    auto parts = t.chunk(gates, 0);
    std::vector<at::Tensor> order = lstm ? std::vector<at::Tensor>{parts[0], parts[2], parts[3], parts[1]}
                                         : std::vector<at::Tensor>{parts[1], parts[0], parts[2]};
    return at::cat(order, 0).contiguous();
  }

  void lift_rnn(const ox::NodeProto& n0) {
    const auto& gp = model_.graph();
    bool lstm = n0.op_type() == "LSTM";
    std::string dir = attr_s(n0, "direction", "forward");
    if (dir == "reverse") unsupported(n0, "direction=reverse (PyTorch has no reverse-only recurrent layer)");
    bool bidir = dir == "bidirectional";
    int64_t dirs = bidir ? 2 : 1;
    int64_t hidden = attr_i(n0, "hidden_size", 0);
    std::string key = path_from_node_name(n0.name());

    auto check_layer = [&](const ox::NodeProto& n) {
      if (attr_s(n, "direction", "forward") != dir || attr_i(n, "hidden_size", 0) != hidden)
        unsupported(n, "layers of different direction or hidden size");
      if (attr(n, "clip")) unsupported(n, "cell clipping (clip)");
      if (attr_i(n, "input_forget", 0) != 0) unsupported(n, "input_forget=1");
      if (attr_i(n, "layout", 0) != 0) unsupported(n, "layout=1 (export keeps the default layout)");
      if (auto acts = attr(n, "activations")) {
        std::vector<std::string> want = lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                             : std::vector<std::string>{"Sigmoid", "Tanh"};
        for (int i = 0; i < acts->strings_size(); ++i)
          if (acts->strings(i) != want[static_cast<size_t>(i) % want.size()])
            unsupported(n, "activation " + acts->strings(i) + " (PyTorch's cells use sigmoid/tanh)");
      }
      if (!lstm && attr_i(n, "linear_before_reset", 0) != 1)
        unsupported(n, "linear_before_reset=0 (PyTorch's GRU applies the reset gate after the linear map, "
                       "linear_before_reset=1)");
      if (!const_of(n, 1) || !const_of(n, 2) || (has_input(n, 3) && !const_of(n, 3)))
        unsupported(n, "weights that are not constants");
      if (has_input(n, 4)) unsupported(n, "sequence_lens (packed sequences)");
      if (lstm && has_input(n, 7)) unsupported(n, "peephole weights (P)");
    };
    check_layer(n0);
    if (hidden <= 0) unsupported(n0, "no hidden_size");

    // The chain of layers and, per layer, the ONNX value holding Y as [seq, batch, dirs*hidden].
    std::vector<int> layers = {node_index_};
    std::vector<int> absorbed;  // wrapper nodes lifted here (skipped later)
    std::string y_seq;
    for (int cur = node_index_;;) {
      const ox::NodeProto& ln = gp.node(cur);
      y_seq.clear();
      if (ln.output_size() > 0 && !ln.output(0).empty() && !consumers_[ln.output(0)].empty()) {
        int c = sole_consumer(ln.output(0));
        const ox::NodeProto* s = c >= 0 ? &gp.node(c) : nullptr;
        if (s && !bidir && s->op_type() == "Squeeze" && const_axes(*s) == std::vector<int64_t>{1}) {
          y_seq = s->output(0);
          absorbed.push_back(c);
        } else if (s && bidir && s->op_type() == "Transpose" &&
                   attr_ints(*s, "perm") == std::vector<int64_t>{0, 2, 1, 3}) {
          int c2 = sole_consumer(s->output(0));
          const ox::NodeProto* r = c2 >= 0 ? &gp.node(c2) : nullptr;
          const at::Tensor* shape = r && r->op_type() == "Reshape" ? const_ahead(*r, 1) : nullptr;
          auto ys = static_shape(ln.output(0));
          bool ok = shape && shape->numel() == 3;
          if (ok) {
            auto sv = ints_of(*shape);
            ok = (sv[2] == -1 || sv[2] == dirs * hidden) &&
                 (sv[0] == 0 || (ys && sv[0] == (*ys)[0]) || (sv[0] == -1 && sv[1] != -1 && sv[2] != -1)) &&
                 (sv[1] == 0 || (ys && sv[1] == (*ys)[2]));
          }
          if (!ok) unsupported(ln, "its Y output is reshaped other than to [seq, batch, directions*hidden]");
          y_seq = r->output(0);
          absorbed.push_back(c);
          absorbed.push_back(c2);
        } else {
          unsupported(ln, "its Y output is used other than through the exporter's Squeeze/Transpose+Reshape");
        }
      }
      if (y_seq.empty()) break;
      int nx = sole_consumer(y_seq);
      if (nx < 0) break;
      const ox::NodeProto& nn = gp.node(nx);
      if (nn.op_type() != n0.op_type() || nn.input(0) != y_seq || path_from_node_name(nn.name()) != key) break;
      check_layer(nn);
      layers.push_back(nx);
      cur = nx;
    }
    size_t num_layers = layers.size();
    // batch_first: the exporter transposes the input to and the output from seq-first.
    std::string x_name = n0.input(0);
    bool batch_first = false;
    if (auto p = producer_.find(x_name); p != producer_.end()) {
      const ox::NodeProto& t = gp.node(p->second);
      if (t.op_type() == "Transpose" && attr_ints(t, "perm") == std::vector<int64_t>{1, 0, 2} &&
          sole_consumer(x_name) == node_index_ && !y_seq.empty()) {
        int c = sole_consumer(y_seq);
        const ox::NodeProto* back = c >= 0 ? &gp.node(c) : nullptr;
        if (back && back->op_type() == "Transpose" && attr_ints(*back, "perm") == std::vector<int64_t>{1, 0, 2}) {
          batch_first = true;
          x_name = t.input(0);
          y_seq = back->output(0);
          absorbed.push_back(c);
        }
      }
    }

    // Final states: one layer's Y_h/Y_c directly, several layers' through Concat(axis=0).
    auto final_state = [&](int k) -> std::string {
      std::vector<std::string> parts;
      bool any_used = false;
      for (int li : layers) {
        const ox::NodeProto& ln = gp.node(li);
        std::string v = k < ln.output_size() ? ln.output(k) : "";
        parts.push_back(v);
        any_used = any_used || (!v.empty() && !consumers_[v].empty());
      }
      if (!any_used) return "";
      if (num_layers == 1) return parts[0];
      int c = sole_consumer(parts[0]);
      const ox::NodeProto* cat = c >= 0 ? &gp.node(c) : nullptr;
      bool ok = cat && cat->op_type() == "Concat" && attr_i(*cat, "axis", 0) == 0 &&
                cat->input_size() == static_cast<int>(num_layers);
      for (size_t l = 0; ok && l < num_layers; ++l)
        ok = cat->input(static_cast<int>(l)) == parts[l] && sole_consumer(parts[l]) == c;
      if (!ok) unsupported(n0, "a single layer's final state is used (not the concatenation nn." +
                                    std::string(lstm ? "LSTM" : "GRU") + " returns)");
      absorbed.push_back(c);
      return cat->output(0);
    };
    std::string h_out = final_state(1);
    std::string c_out = lstm ? final_state(2) : "";

    // Initial states: all zeros (omitted, or constant zeros), or per-layer slices of one tensor.
    auto initial_state = [&](int k) -> std::optional<std::string> {  // nullopt: zeros
      std::vector<std::string> names;
      size_t zeros = 0;
      for (int li : layers) {
        const ox::NodeProto& ln = gp.node(li);
        std::string v = has_input(ln, k) ? ln.input(k) : "";
        names.push_back(v);
        if (v.empty() || is_zero_const(v)) ++zeros;
      }
      if (zeros == num_layers) return std::nullopt;
      if (zeros != 0) unsupported(n0, "initial states given for some layers only");
      if (num_layers == 1) return ir_zeros(names[0]) ? std::nullopt : std::optional<std::string>(names[0]);
      std::string base;
      for (size_t l = 0; l < num_layers; ++l) {
        auto p = producer_.find(names[l]);
        const ox::NodeProto* s = p == producer_.end() ? nullptr : &gp.node(p->second);
        bool ok = s && s->op_type() == "Slice";
        std::vector<int64_t> starts, ends, axes, steps;
        if (ok && opset_ < 10) {
          starts = attr_ints(*s, "starts").value_or(std::vector<int64_t>{});
          ends = attr_ints(*s, "ends").value_or(std::vector<int64_t>{});
          axes = attr_ints(*s, "axes").value_or(std::vector<int64_t>{0});
        } else if (ok) {
          ok = const_ahead(*s, 1) && const_ahead(*s, 2) && (!has_input(*s, 3) || const_ahead(*s, 3)) &&
               (!has_input(*s, 4) || const_ahead(*s, 4));
          if (ok) {
            starts = ints_of(*const_of(*s, 1));
            ends = ints_of(*const_of(*s, 2));
            axes = has_input(*s, 3) ? ints_of(*const_of(*s, 3)) : std::vector<int64_t>{0};
            steps = has_input(*s, 4) ? ints_of(*const_of(*s, 4)) : std::vector<int64_t>{1};
          }
        }
        int64_t lo = static_cast<int64_t>(l) * dirs;
        ok = ok && starts == std::vector<int64_t>{lo} && ends == std::vector<int64_t>{lo + dirs} &&
             axes == std::vector<int64_t>{0} && (steps.empty() || steps == std::vector<int64_t>{1}) &&
             (base.empty() || base == s->input(0));
        if (!ok) unsupported(n0, "per-layer initial states that are not slices of one tensor");
        base = s->input(0);
      }
      if (ir_zeros(base)) return std::nullopt;
      return base;
    };
    auto h0 = initial_state(5);
    auto c0 = lstm ? initial_state(6) : std::nullopt;
    if (lstm && h0.has_value() != c0.has_value()) unsupported(n0, "only one of the initial h and c states is given");

    // Weights in nn.LSTM/nn.GRU's order, PyTorch layout and gate order.
    const at::Tensor& w0 = *const_of(n0, 1);
    bool has_bias = false;
    for (int li : layers) has_bias = has_bias || has_input(gp.node(li), 3);
    std::vector<std::pair<std::string, at::Tensor>> params;
    int64_t gates = lstm ? 4 : 3;
    for (size_t l = 0; l < num_layers; ++l) {
      const ox::NodeProto& ln = gp.node(layers[l]);
      const at::Tensor& W = *const_of(ln, 1);
      const at::Tensor& R = *const_of(ln, 2);
      if (W.dim() != 3 || R.dim() != 3 || W.size(0) != dirs || R.size(0) != dirs || W.size(1) != gates * hidden ||
          R.size(1) != gates * hidden || R.size(2) != hidden)
        unsupported(ln, "weights of unexpected shape");
      at::Tensor B = has_input(ln, 3) ? *const_of(ln, 3) : at::zeros({dirs, 2 * gates * hidden}, W.options());
      if (B.dim() != 2 || B.size(0) != dirs || B.size(1) != 2 * gates * hidden) unsupported(ln, "a bias of unexpected shape");
      for (int64_t d = 0; d < dirs; ++d) {
        std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
        params.emplace_back("weight_ih" + sfx, reorder_gates(W[d], lstm));
        params.emplace_back("weight_hh" + sfx, reorder_gates(R[d], lstm));
        if (has_bias) {
          params.emplace_back("bias_ih" + sfx, reorder_gates(B[d].slice(0, 0, gates * hidden), lstm));
          params.emplace_back("bias_hh" + sfx, reorder_gates(B[d].slice(0, gates * hidden), lstm));
        }
      }
    }

    std::vector<Value*> ins = {tensor_in(x_name)};
    std::string path = module_path(n0, "", lstm ? "lstm" : "gru");
    scope_ = scope_parent(path);
    if (h0) {
      Value* h = tensor_in(*h0);
      if (lstm) {
        Value* c = tensor_in(*c0);
        Node* t = append("prim.TupleConstruct", {h, c});
        ins.push_back(t->add_output(Type::tuple({h->type(), c->type()})));
      } else {
        ins.push_back(h);
      }
    }
    Node* node = append(lstm ? "nn.LSTM" : "nn.GRU", ins);
    node->set_module(path);
    Attrs& a = node->attrs();
    a.set("input_size", w0.size(2));
    a.set("hidden_size", hidden);
    a.set("num_layers", static_cast<int64_t>(num_layers));
    a.set("bias", has_bias);
    a.set("batch_first", batch_first);
    a.set("dropout", 0.0);
    a.set("bidirectional", bidir);
    if (lstm) a.set("proj_size", int64_t{0});
    for (const auto& [k, t] : params) module_weight(node, k, t, true);

    Type any = Type::any();
    Type second = lstm ? Type::tuple({any, any}) : any;
    Value* r = node->add_output(Type::tuple({any, second}));
    Node* u1 = append("prim.TupleUnpack", {r});
    Value* y = u1->add_output(any);
    Value* b = u1->add_output(second);
    Value* h = b;
    Value* c = nullptr;
    if (lstm) {
      Node* u2 = append("prim.TupleUnpack", {b});
      h = u2->add_output(any);
      c = u2->add_output(any);
    }
    auto bind_name = [&](const std::string& name, Value* v) {
      if (name.empty()) return;
      auto it = types_.find(name);
      v->set_type(it != types_.end() ? it->second : Type::tensor());
      if (!value_hint(name).empty()) v->set_name(value_hint(name));
      env_[name] = v;
    };
    bind_name(y_seq, y);
    bind_name(h_out, h);
    if (lstm) bind_name(c_out, c);
    for (size_t l = 1; l < num_layers; ++l) skip_.insert(layers[l]);
    for (int k : absorbed) skip_.insert(k);
  }

  // ---- layers ----

  // Begin/end padding per spatial dim, with auto_pad resolved against the input's static shape.
  struct Pads {
    std::vector<int64_t> begin, end;
  };
  Pads spatial_pads(const ox::NodeProto& n, size_t dims, const std::vector<int64_t>& kernel,
                    const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
    std::string auto_pad = attr_s(n, "auto_pad", "NOTSET");
    Pads p{std::vector<int64_t>(dims, 0), std::vector<int64_t>(dims, 0)};
    if (auto_pad == "VALID") return p;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Output size ceil(in / stride); the odd pixel of the total goes to the end (UPPER) or
      // the beginning (LOWER).
      auto s = known_shape(n.input(0));
      if (!s || s->size() != dims + 2) unsupported(n, "auto_pad=" + auto_pad + " on an input without a static shape");
      for (size_t k = 0; k < dims; ++k) {
        int64_t in = (*s)[k + 2], st = stride[k];
        int64_t extent = (kernel[k] - 1) * dilation[k] + 1;
        int64_t total = std::max<int64_t>(0, ((in + st - 1) / st - 1) * st + extent - in);
        int64_t small = total / 2;
        p.begin[k] = auto_pad == "SAME_UPPER" ? small : total - small;
        p.end[k] = total - p.begin[k];
      }
      return p;
    }
    if (auto_pad != "NOTSET") unsupported(n, "auto_pad=" + auto_pad);
    if (auto pads = attr_ints(n, "pads")) {
      if (pads->size() != 2 * dims) unsupported(n, "pads of the wrong length");
      p.begin.assign(pads->begin(), pads->begin() + static_cast<std::ptrdiff_t>(dims));
      p.end.assign(pads->begin() + static_cast<std::ptrdiff_t>(dims), pads->end());
    }
    return p;
  }

  // PyTorch's conv/pool padding is symmetric: the op gets the smaller side of each dim as
  // `padding`, and the excess on the larger side is an F.pad with `value` before it.
  Value* pad_excess(Value* x, const Pads& p, double value, std::vector<int64_t>& padding) {
    size_t dims = p.begin.size();
    padding.clear();
    for (size_t k = 0; k < dims; ++k) padding.push_back(std::min(p.begin[k], p.end[k]));
    std::vector<int64_t> tp;  // F.pad order: last dim first, (begin, end) pairs
    bool any = false;
    for (size_t k = dims; k-- > 0;) {
      tp.push_back(p.begin[k] - padding[k]);
      tp.push_back(p.end[k] - padding[k]);
      any = any || tp[tp.size() - 2] || tp.back();
    }
    if (!any) return x;
    return method("F.pad", {x, c_ints(tp), c_str("constant"), c_float(value)});
  }

  void lift_conv(const ox::NodeProto& n, bool transposed) {
    const at::Tensor* w = const_of(n, 1);
    const at::Tensor* b = const_of(n, 2);
    if (!w || (has_input(n, 2) && !b)) unsupported(n, "the weight or bias is not a constant");
    int64_t dims = w->dim() - 2;
    if (dims < 1 || dims > 3) unsupported(n, "a " + std::to_string(dims) + "-d convolution");
    size_t d = static_cast<size_t>(dims);
    int64_t groups = attr_i(n, "group", 1);
    std::vector<int64_t> kernel = w->sizes().slice(2).vec();
    std::vector<int64_t> stride = attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1));
    std::vector<int64_t> dilation = attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1));
    Pads pads = spatial_pads(n, d, kernel, stride, dilation);
    std::vector<int64_t> padding;
    Value* x = tensor_in(n.input(0));
    if (transposed) {
      // ConvTranspose pads crop the output, and its auto_pad targets input*stride: not lifted.
      std::string auto_pad = attr_s(n, "auto_pad", "NOTSET");
      if (auto_pad != "NOTSET" && auto_pad != "VALID") unsupported(n, "auto_pad=" + auto_pad);
      if (pads.begin != pads.end) unsupported(n, "asymmetric padding");
      padding = pads.begin;
    } else {
      x = pad_excess(x, pads, 0.0, padding);
    }
    std::string cls = std::string(transposed ? "nn.ConvTranspose" : "nn.Conv") + std::to_string(dims) + "d";
    Node* node = append(cls, {x});
    node->set_module(module_path(n, n.input(1), transposed ? "conv_transpose" : "conv"));
    node->set_scope(scope_parent(node->module()));
    Attrs& a = node->attrs();
    int64_t in_ch = transposed ? w->size(0) : w->size(1) * groups;
    int64_t out_ch = transposed ? w->size(1) * groups : w->size(0);
    a.set("in_channels", in_ch);
    a.set("out_channels", out_ch);
    a.set("kernel_size", kernel);
    a.set("stride", stride);
    a.set("padding", padding);
    if (transposed) {
      if (attr(n, "output_shape")) unsupported(n, "output_shape (export with output_padding instead)");
      a.set("output_padding", attr_ints(n, "output_padding").value_or(std::vector<int64_t>(d, 0)));
      a.set("groups", groups);
      a.set("bias", b != nullptr);
      a.set("dilation", dilation);
    } else {
      a.set("dilation", dilation);
      a.set("groups", groups);
      a.set("bias", b != nullptr);
    }
    a.set("padding_mode", std::string("zeros"));
    module_weight(node, "weight", *w, true);
    if (b) module_weight(node, "bias", *b, true);
    out(node, n);
  }

  static std::string scope_parent(const std::string& module) {
    size_t dot = module.rfind('.');
    return dot == std::string::npos ? "" : module.substr(0, dot);
  }

  Value* linear(const ox::NodeProto& n, Value* x, const std::string& weight_name, const at::Tensor& w,
                const at::Tensor* bias) {
    Node* node = append("nn.Linear", {x});
    node->set_module(module_path(n, weight_name, "linear"));
    node->set_scope(scope_parent(node->module()));
    node->attrs().set("in_features", w.size(1));
    node->attrs().set("out_features", w.size(0));
    node->attrs().set("bias", bias != nullptr);
    module_weight(node, "weight", w, true);
    if (bias) module_weight(node, "bias", *bias, true);
    return node->add_output(Type::tensor());
  }

  void lift_gemm(const ox::NodeProto& n) {
    const at::Tensor* b = const_of(n, 1);
    const at::Tensor* c = const_of(n, 2);
    double alpha = attr_f(n, "alpha", 1.0), beta = attr_f(n, "beta", 1.0);
    bool ta = attr_i(n, "transA", 0) != 0, tb = attr_i(n, "transB", 0) != 0;
    if (b && !ta && alpha == 1.0 && (!has_input(n, 2) || (c && beta == 1.0)) && b->dim() == 2) {
      at::Tensor w = tb ? *b : b->t().contiguous();
      at::Tensor bias;
      if (c) {
        if (c->numel() != w.size(0)) goto general;
        bias = c->reshape({w.size(0)}).to(w.scalar_type());
      }
      bind(n, 0, linear(n, tensor_in(n.input(0)), tb ? n.input(1) : "", w, c ? &bias : nullptr));
      return;
    }
  general:
    Value* a = tensor_in(n.input(0));
    if (ta) a = method("Tensor.t", {a});
    Value* bb = tensor_in(n.input(1));
    if (tb) bb = method("Tensor.t", {bb});
    Value* y = method("torch.matmul", {a, bb});
    if (alpha != 1.0) y = method("torch.mul", {y, c_float(alpha)});
    if (has_input(n, 2)) {
      Value* cc = tensor_in(n.input(2));
      if (beta != 1.0) cc = method("torch.mul", {cc, c_float(beta)});
      y = method("torch.add", {y, cc, c_int(1)});
    }
    bind(n, 0, y);
  }

  Value* method(const std::string& op, const std::vector<Value*>& ins) {
    Node* node = append(op, ins);
    return node->add_output(Type::tensor());
  }

  void lift_matmul(const ox::NodeProto& n) {
    const at::Tensor* b = const_of(n, 1);
    if (b && b->dim() == 2 && !is_const(n.input(0))) {
      at::Tensor w = b->t().contiguous();
      // MatMul + Add(bias) as exported for nn.Linear on >2-d inputs.
      const auto& users = consumers_[n.output(0)];
      if (users.size() == 1 && users[0] > node_index_) {
        const ox::NodeProto& add = model_.graph().node(users[0]);
        if (add.op_type() == "Add" && add.input_size() == 2) {
          int other = add.input(0) == n.output(0) ? 1 : 0;
          const at::Tensor* bias = const_of(add, other);
          if (bias && bias->numel() == w.size(0) && bias->dim() == 1) {
            at::Tensor bb = bias->to(w.scalar_type());
            Value* y = linear(n, tensor_in(n.input(0)), "", w, &bb);
            skip_.insert(users[0]);
            bind(add, 0, y);
            return;
          }
        }
      }
      bind(n, 0, linear(n, tensor_in(n.input(0)), "", w, nullptr));
      return;
    }
    call("torch.matmul", {tensor_in(n.input(0)), tensor_in(n.input(1))}, n);
  }

  void lift_batch_norm(const ox::NodeProto& n) {
    for (int i = 1; i <= 4; ++i)
      if (!const_of(n, i)) unsupported(n, "scale/bias/mean/var are not constants");
    if (attr_i(n, "training_mode", 0) != 0) unsupported(n, "training_mode=1");
    for (int i = 1; i < n.output_size(); ++i)
      if (!n.output(i).empty() && !consumers_[n.output(i)].empty()) unsupported(n, "running statistics outputs are used");
    auto r = known_rank(n.input(0));
    int64_t dims = !r ? 2 : *r <= 3 ? 1 : *r - 2;
    if (dims > 3) unsupported(n, "a " + std::to_string(*r) + "-d input");
    Node* node = append("nn.BatchNorm" + std::to_string(dims) + "d", {tensor_in(n.input(0))});
    node->set_module(module_path(n, n.input(1), "bn"));
    node->set_scope(scope_parent(node->module()));
    const at::Tensor& scale = *const_of(n, 1);
    node->attrs().set("num_features", scale.size(0));
    node->attrs().set("eps", attr_f(n, "epsilon", 1e-5));
    // ONNX momentum weighs the running value (0.9), PyTorch the new batch (0.1).
    double momentum = 1.0 - attr_f(n, "momentum", 0.9);
    momentum = std::round(momentum * 1e6) / 1e6;
    node->attrs().set("momentum", momentum);
    node->attrs().set("affine", true);
    node->attrs().set("track_running_stats", true);
    module_weight(node, "weight", scale, true);
    module_weight(node, "bias", *const_of(n, 2), true);
    module_weight(node, "running_mean", *const_of(n, 3), false);
    module_weight(node, "running_var", *const_of(n, 4), false);
    module_weight(node, "num_batches_tracked", at::scalar_tensor(0, at::kLong), false);
    ++bn_count_;
    out(node, n);
  }

  void lift_pool(const ox::NodeProto& n, bool max) {
    auto kernel = attr_ints(n, "kernel_shape");
    if (!kernel) unsupported(n, "no kernel_shape");
    int64_t dims = static_cast<int64_t>(kernel->size());
    size_t d = kernel->size();
    if (dims < 1 || dims > 3) unsupported(n, "a " + std::to_string(dims) + "-d pooling");
    if (n.output_size() > 1 && !n.output(1).empty()) unsupported(n, "indices output");
    std::vector<int64_t> stride = attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1));
    std::vector<int64_t> dilation = attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1));
    if (!max && dilation != std::vector<int64_t>(d, 1)) unsupported(n, "dilated average pooling");
    Pads pads = spatial_pads(n, d, *kernel, stride, dilation);
    bool include_pad = attr_i(n, "count_include_pad", 0) != 0;
    if (!max && !include_pad && pads.begin != pads.end)
      unsupported(n, "asymmetric padding with count_include_pad=0 (padded zeros would be averaged in)");
    // Max pooling never picks a padded element: pad the excess with -inf.
    std::vector<int64_t> padding;
    Value* x = pad_excess(tensor_in(n.input(0)), pads, max ? -std::numeric_limits<double>::infinity() : 0.0, padding);
    bool ceil = attr_i(n, "ceil_mode", 0) != 0;
    std::string nd = std::to_string(dims) + "d";
    std::vector<Value*> ins = {x, c_ints(*kernel), c_ints(stride), c_ints(padding)};
    if (max) {
      ins.push_back(c_ints(dilation));
      ins.push_back(c_bool(ceil));
      call("F.max_pool" + nd, ins, n);
    } else {
      ins.push_back(c_bool(ceil));
      ins.push_back(c_bool(include_pad));
      if (dims > 1) ins.push_back(c_none());
      call("F.avg_pool" + nd, ins, n);
    }
  }

  void lift_global_pool(const ox::NodeProto& n, bool max) {
    auto r = known_rank(n.input(0));
    int64_t dims = r ? *r - 2 : 2;
    if (dims < 1 || dims > 3) unsupported(n, "unexpected input rank");
    Value* x = tensor_in(n.input(0));
    if (max) {
      std::vector<int64_t> axes;
      for (int64_t k = 0; k < dims; ++k) axes.push_back(2 + k);
      call("torch.amax", {x, c_ints(axes), c_bool(true)}, n);
    } else {
      call("F.adaptive_avg_pool" + std::to_string(dims) + "d", {x, c_ints(std::vector<int64_t>(static_cast<size_t>(dims), 1))}, n);
    }
  }

  void lift_prelu(const ox::NodeProto& n) {
    const at::Tensor* w = const_of(n, 1);
    auto r = known_rank(n.input(0));
    // nn.PReLU's weight is per channel (dim 1) or a single value: the exporter writes [C,1,1].
    bool per_channel = w && r && *r >= 2 && w->dim() <= *r - 1 && w->numel() >= 1;
    if (per_channel && w->numel() > 1)
      for (int64_t k = 1; k < w->dim(); ++k) per_channel = per_channel && w->size(k) == 1;
    if (!per_channel) return void(call("F.prelu", {tensor_in(n.input(0)), tensor_in(n.input(1))}, n));
    Node* node = append("nn.PReLU", {tensor_in(n.input(0))});
    node->set_module(module_path(n, n.input(1), "prelu"));
    node->set_scope(scope_parent(node->module()));
    node->attrs().set("num_parameters", w->numel());
    module_weight(node, "weight", w->flatten(), true);
    out(node, n);
  }

  void lift_layer_norm(const ox::NodeProto& n) {
    const at::Tensor* w = const_of(n, 1);
    const at::Tensor* b = const_of(n, 2);
    auto r = known_rank(n.input(0));
    int64_t axis = attr_i(n, "axis", -1);
    if (!w || (has_input(n, 2) && !b)) unsupported(n, "non-constant scale/bias");
    std::vector<int64_t> shape = w->sizes().vec();
    // Normalised dims: axis..end, which must be the scale's shape.
    int64_t tail = axis < 0 ? -axis : (r ? *r - axis : -1);
    if (tail != static_cast<int64_t>(shape.size())) unsupported(n, "scale shape does not match the axis");
    for (int i = 1; i < n.output_size(); ++i)
      if (!n.output(i).empty() && !consumers_[n.output(i)].empty()) unsupported(n, "mean/inv_std outputs are used");
    Node* node = append("nn.LayerNorm", {tensor_in(n.input(0))});
    node->set_module(module_path(n, n.input(1), "layer_norm"));
    node->set_scope(scope_parent(node->module()));
    node->attrs().set("normalized_shape", shape);
    node->attrs().set("eps", attr_f(n, "epsilon", 1e-5));
    node->attrs().set("elementwise_affine", true);
    module_weight(node, "weight", *w, true);
    module_weight(node, "bias", b ? *b : at::zeros_like(*w), true);
    out(node, n);
  }

  void lift_hard_sigmoid(const ox::NodeProto& n) {
    double alpha = attr_f(n, "alpha", 0.2), beta = attr_f(n, "beta", 0.5);
    Value* x = tensor_in(n.input(0));
    if (std::abs(alpha - 1.0 / 6.0) < 1e-6 && std::abs(beta - 0.5) < 1e-6) {
      call("F.hardsigmoid", {x}, n);
      return;
    }
    Value* y = method("torch.mul", {x, c_float(alpha)});
    y = method("torch.add", {y, c_float(beta), c_int(1)});
    call("torch.clamp", {y, c_float(0.0), c_float(1.0)}, n);
  }

  void lift_clip(const ox::NodeProto& n) {
    std::optional<double> lo, hi;
    if (opset_ < 11) {
      if (attr(n, "min")) lo = attr_f(n, "min", 0);
      if (attr(n, "max")) hi = attr_f(n, "max", 0);
    } else {
      if (has_input(n, 1)) {
        const at::Tensor* t = const_of(n, 1);
        if (!t) unsupported(n, "a non-constant min");
        lo = t->item<double>();
      }
      if (has_input(n, 2)) {
        const at::Tensor* t = const_of(n, 2);
        if (!t) unsupported(n, "a non-constant max");
        hi = t->item<double>();
      }
    }
    Value* x = tensor_in(n.input(0));
    if (lo && hi && *lo == 0.0 && *hi == 6.0) return void(call("F.relu6", {x}, n));
    if (lo && hi) return void(call("F.hardtanh", {x, c_float(*lo), c_float(*hi)}, n));
    if (lo && *lo == 0.0 && !hi) return void(call("F.relu", {x}, n));
    call("torch.clamp", {x, lo ? c_float(*lo) : c_none(), hi ? c_float(*hi) : c_none()}, n);
  }

  void lift_softmax(const ox::NodeProto& n, bool log) {
    int64_t axis = attr_i(n, "axis", opset_ < 13 ? 1 : -1);
    auto r = known_rank(n.input(0));
    if (opset_ < 13) {
      // Before opset 13 softmax works on the input flattened to 2-d at `axis`: the same as
      // PyTorch's only when axis is the last dim.
      if (!r || (axis != -1 && axis != *r - 1)) unsupported(n, "softmax (opset < 13) over several dims");
    }
    const char* op = log ? "F.log_softmax" : "F.softmax";
    call(op, {tensor_in(n.input(0)), c_int(axis), c_none()}, n);
  }

  void lift_flatten(const ox::NodeProto& n) {
    int64_t axis = attr_i(n, "axis", 1);
    auto r = known_rank(n.input(0));
    if (axis < 0 && r) axis += *r;
    Value* x = tensor_in(n.input(0));
    if (axis == 1) return void(call("torch.flatten", {x, c_int(1), c_int(-1)}, n));
    if (axis == 0) return void(call("Tensor.reshape", {x, c_ints({1, -1})}, n));
    auto s = known_shape(n.input(0));
    if (!s) unsupported(n, "flatten at axis " + std::to_string(axis) + " of a dynamic shape");
    int64_t lead = 1;
    for (int64_t k = 0; k < axis; ++k) lead *= (*s)[static_cast<size_t>(k)];
    call("Tensor.reshape", {x, c_ints({lead, -1})}, n);
  }

  void lift_reshape(const ox::NodeProto& n) {
    const at::Tensor* s = const_of(n, 1);
    if (!s) unsupported(n, "a shape computed at run time (export with static shapes)");
    std::vector<int64_t> shape = ints_of(*s);
    if (attr_i(n, "allowzero", 0) == 0 && std::count(shape.begin(), shape.end(), 0)) {
      auto in = known_shape(n.input(0));
      for (size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] != 0) continue;
        if (!in || k >= in->size()) {
          // A 0 (copy) dimension of a dynamic shape: the input's run-time size.
          std::vector<Value*> elems;
          for (size_t j = 0; j < shape.size(); ++j)
            elems.push_back(shape[j] == 0 ? size_of(n.input(0), static_cast<int64_t>(j)) : c_int(shape[j]));
          return void(call("Tensor.reshape", {tensor_in(n.input(0)), int_list(elems)}, n));
        }
        shape[k] = (*in)[k];
      }
    }
    call("Tensor.reshape", {tensor_in(n.input(0)), c_ints(shape)}, n);
  }

  void lift_transpose(const ox::NodeProto& n) {
    std::vector<int64_t> perm = attr_ints(n, "perm").value_or(std::vector<int64_t>{});
    if (perm.empty()) {
      auto r = known_rank(n.input(0));
      if (!r) unsupported(n, "no perm and unknown rank");
      for (int64_t k = *r - 1; k >= 0; --k) perm.push_back(k);
    }
    call("Tensor.permute", {tensor_in(n.input(0)), c_ints(perm)}, n);
  }

  Value* list_of(const std::vector<Value*>& vs) {
    Node* l = append("prim.ListConstruct", vs);
    return l->add_output(Type::list(Type::tensor()));
  }

  void lift_concat(const ox::NodeProto& n) {
    std::vector<Value*> vs;
    for (int i = 0; i < n.input_size(); ++i)
      if (!n.input(i).empty()) vs.push_back(tensor_in(n.input(i)));
    call("torch.cat", {list_of(vs), c_int(attr_i(n, "axis", 0))}, n);
  }

  void lift_split(const ox::NodeProto& n) {
    int64_t axis = attr_i(n, "axis", 0);
    std::vector<int64_t> sizes;
    if (auto a = attr_ints(n, "split")) sizes = *a;
    else if (const at::Tensor* t = const_of(n, 1)) sizes = ints_of(*t);
    else if (has_input(n, 1)) unsupported(n, "split sizes computed at run time");
    if (sizes.empty()) {
      auto s = known_shape(n.input(0));
      if (!s) unsupported(n, "equal split of a dynamic shape");
      int64_t a = axis < 0 ? axis + static_cast<int64_t>(s->size()) : axis;
      int64_t total = (*s)[static_cast<size_t>(a)], parts = n.output_size();
      int64_t each = (total + parts - 1) / parts;
      for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, total - k * each));
    }
    Node* sp = append("Tensor.split_with_sizes", {tensor_in(n.input(0)), c_ints(sizes), c_int(axis)});
    Value* list = sp->add_output(Type::list(Type::tensor()));
    Node* un = append("prim.ListUnpack", {list});
    for (int i = 0; i < n.output_size(); ++i) out(un, n, i);
  }

  void lift_slice(const ox::NodeProto& n) {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
      starts = attr_ints(n, "starts").value_or(std::vector<int64_t>{});
      ends = attr_ints(n, "ends").value_or(std::vector<int64_t>{});
      axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
    } else {
      for (int i = 1; i <= 4; ++i)
        if (has_input(n, i) && !const_of(n, i)) unsupported(n, "slice bounds computed at run time");
      starts = ints_of(*const_of(n, 1));
      ends = ints_of(*const_of(n, 2));
      if (const at::Tensor* t = const_of(n, 3)) axes = ints_of(*t);
      if (const at::Tensor* t = const_of(n, 4)) steps = ints_of(*t);
    }
    Value* x = tensor_in(n.input(0));
    auto r = known_rank(n.input(0));
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
      if (a < 0 && r) a += *r;
      int64_t st = steps.empty() ? 1 : steps[k];
      if (st <= 0) unsupported(n, "a negative step");
      int64_t end = std::min<int64_t>(ends[k], std::numeric_limits<int64_t>::max());
      std::vector<Value*> ins = {x, c_int(a), c_int(starts[k]), c_int(end), c_int(st)};
      if (k + 1 == starts.size()) return void(call("Tensor.slice", ins, n));
      x = method("Tensor.slice", ins);
    }
    bind(n, 0, x);
  }

  void lift_pad(const ox::NodeProto& n) {
    std::string mode = attr_s(n, "mode", "constant");
    std::vector<int64_t> pads;
    double value = 0.0;
    if (opset_ < 11) {
      pads = attr_ints(n, "pads").value_or(std::vector<int64_t>{});
      value = attr_f(n, "value", 0.0);
    } else {
      if (!const_of(n, 1)) unsupported(n, "pads computed at run time");
      pads = ints_of(*const_of(n, 1));
      if (has_input(n, 2)) {
        if (!const_of(n, 2)) unsupported(n, "a padding value computed at run time");
        value = const_of(n, 2)->item<double>();
      }
      if (has_input(n, 3)) unsupported(n, "the axes input");
    }
    size_t r = pads.size() / 2;
    // ONNX: all begins then all ends, first dim first; F.pad: last dim first, (begin, end) pairs.
    std::vector<int64_t> tp;
    size_t first = 0;
    while (first < r && pads[first] == 0 && pads[first + r] == 0) ++first;
    for (size_t k = r; k-- > first;) {
      tp.push_back(pads[k]);
      tp.push_back(pads[k + r]);
    }
    std::string tmode = mode == "edge" ? "replicate" : mode;
    if (tmode != "constant" && tmode != "reflect" && tmode != "replicate") unsupported(n, "mode " + mode);
    call("F.pad", {tensor_in(n.input(0)), c_ints(tp), c_str(tmode), tmode == "constant" ? c_float(value) : c_none()}, n);
  }

  // sym_sizes: the `sizes` input as ints computed at run time (Note [Dynamic shapes]).
  void lift_resize(const ox::NodeProto& n, std::optional<std::vector<Value*>> sym_sizes = std::nullopt) {
    std::string mode = attr_s(n, "mode", "nearest");
    std::string ctm = attr_s(n, "coordinate_transformation_mode", opset_ < 11 ? "asymmetric" : "half_pixel");
    std::string nearest = attr_s(n, "nearest_mode", "round_prefer_floor");
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    if (n.op_type() == "Upsample" || opset_ < 11) {
      if (const at::Tensor* t = const_of(n, 1)) scales = doubles_of(*t);
      else if (auto a = attr(n, "scales")) scales.assign(a->floats().begin(), a->floats().end());
      else unsupported(n, "scales computed at run time");
    } else {
      if (sym_sizes) {
        if (sym_sizes->size() < 3) unsupported(n, "sizes for fewer than 3 dims");
      } else if (const at::Tensor* t = const_of(n, 2); t && t->numel() > 0) {
        scales = doubles_of(*t);
      } else if (const at::Tensor* t = const_of(n, 3); t && t->numel() > 0) {
        sizes = ints_of(*t);
      } else {
        unsupported(n, "scales/sizes computed at run time");
      }
    }
    std::string tmode;
    Value* align = nullptr;
    auto r = rank_of(n.input(0));
    size_t spatial = sym_sizes ? sym_sizes->size() - 2 : scales.empty() ? sizes.size() - 2 : scales.size() - 2;
    if (mode == "nearest") {
      if (ctm != "asymmetric" || (opset_ >= 11 && nearest != "floor"))
        unsupported(n, "nearest resize with " + ctm + "/" + nearest + " rounding");
      tmode = "nearest";
      align = c_none();
    } else if (mode == "linear" || mode == "cubic") {
      if (mode == "cubic") {
        if (spatial != 2) unsupported(n, "cubic resize of a non-2-d input");
        tmode = "bicubic";
      } else {
        tmode = spatial == 1 ? "linear" : spatial == 2 ? "bilinear" : "trilinear";
      }
      if (ctm == "align_corners") align = c_bool(true);
      else if (ctm == "half_pixel" || ctm == "pytorch_half_pixel") align = c_bool(false);
      else unsupported(n, "coordinate_transformation_mode " + ctm);
    } else {
      unsupported(n, "mode " + mode);
    }
    (void)r;
    // Sizes of dims 0 and 1 (batch, channels) are the input's: F.interpolate keeps them.
    Value* size = sym_sizes ? int_list(std::vector<Value*>(sym_sizes->begin() + 2, sym_sizes->end()))
                  : sizes.empty() ? c_none()
                                  : c_ints(std::vector<int64_t>(sizes.begin() + 2, sizes.end()));
    Value* scale = scales.empty() ? c_none() : c_floats(std::vector<double>(scales.begin() + 2, scales.end()));
    call("F.interpolate", {tensor_in(n.input(0)), size, scale, c_str(tmode), align}, n);
  }

  void lift_reduce(const ox::NodeProto& n) {
    // Axes: an attribute, or (ReduceSum from opset 13, the others from 18) an optional input.
    std::vector<int64_t> axes;
    if (auto a = attr_ints(n, "axes")) axes = *a;
    else if (has_input(n, 1)) {
      if (!const_of(n, 1)) unsupported(n, "axes computed at run time");
      axes = ints_of(*const_of(n, 1));
    }
    bool keep = attr_i(n, "keepdims", 1) != 0;
    Value* x = tensor_in(n.input(0));
    if (axes.empty() && attr_i(n, "noop_with_empty_axes", 0) != 0) return bind(n, 0, x);
    if (axes.empty()) {
      auto r = known_rank(n.input(0));
      if (!r) unsupported(n, "a reduction over all dims of unknown rank");
      for (int64_t k = 0; k < *r; ++k) axes.push_back(k);
    }
    const std::string& op = n.op_type();
    if (op == "ReduceMean") return void(call("torch.mean", {x, c_ints(axes), c_bool(keep), c_none()}, n));
    if (op == "ReduceMax") return void(call("torch.amax", {x, c_ints(axes), c_bool(keep)}, n));
    if (op == "ReduceMin") return void(call("torch.amin", {x, c_ints(axes), c_bool(keep)}, n));
    // Sums: of x, |x| (L1) or x^2 (L2, SumSquare; L2 then takes the square root).
    if (op == "ReduceL1") x = method("torch.abs", {x});
    if (op == "ReduceL2" || op == "ReduceSumSquare") x = method("torch.square", {x});
    if (op != "ReduceL2") return void(call("torch.sum", {x, c_ints(axes), c_bool(keep), c_none()}, n));
    call("torch.sqrt", {method("torch.sum", {x, c_ints(axes), c_bool(keep), c_none()})}, n);
  }

  void lift_squeeze(const ox::NodeProto& n, bool unsqueeze) {
    std::vector<int64_t> axes;
    if (auto a = attr_ints(n, "axes")) axes = *a;
    else if (has_input(n, 1)) {
      if (!const_of(n, 1)) unsupported(n, "axes computed at run time");
      axes = ints_of(*const_of(n, 1));
    }
    Value* x = tensor_in(n.input(0));
    auto r = known_rank(n.input(0));
    if (axes.empty()) {
      if (unsqueeze) unsupported(n, "no axes");
      return void(call("Tensor.squeeze", {x}, n));
    }
    int64_t rank = r ? *r + (unsqueeze ? static_cast<int64_t>(axes.size()) : 0) : -1;
    for (auto& a : axes) {
      if (a < 0) {
        if (rank < 0) unsupported(n, "negative axes of unknown rank");
        a += rank;
      }
    }
    if (unsqueeze) std::sort(axes.begin(), axes.end());
    else std::sort(axes.rbegin(), axes.rend());
    for (size_t k = 0; k < axes.size(); ++k) {
      std::vector<Value*> ins = {x, c_int(axes[k])};
      const char* op = unsqueeze ? "Tensor.unsqueeze" : "Tensor.squeeze";
      if (k + 1 == axes.size()) return void(call(op, ins, n));
      x = method(op, ins);
    }
  }

  void lift_gather(const ox::NodeProto& n) {
    int64_t axis = attr_i(n, "axis", 0);
    const at::Tensor* idx = const_of(n, 1);
    const at::Tensor* table = const_of(n, 0);
    // nn.Embedding exports as Gather(weight, ids): a 2-d initializer indexed by run-time ids.
    if (!idx && table && table->dim() == 2 && (axis == 0 || axis == -2) && table->is_floating_point() &&
        init_names_.count(n.input(0)))
      return lift_embedding(n, *table);
    Value* x = tensor_in(n.input(0));
    if (idx && idx->dim() == 0) return void(call("Tensor.select", {x, c_int(axis), c_int(idx->item<int64_t>())}, n));
    if (idx && idx->dim() == 1) {
      Value* iv = constant(idx->to(at::kLong).clone(), Type::tensor(DType::I64, {idx->size(0)}));
      return void(call("torch.index_select", {x, c_int(axis), iv}, n));
    }
    // Run-time or multi-dimensional indices: index_select on the flattened indices, then the
    // result's shape x.shape[:axis] + indices.shape + x.shape[axis+1:]. Like index_select, the
    // indices must not be negative (the exporter writes them non-negative).
    auto r = known_rank(n.input(0));
    auto ir = known_rank(n.input(1));
    if (!r || !ir) unsupported(n, "data or indices of unknown rank");
    int64_t a = axis < 0 ? axis + *r : axis;
    if (a < 0 || a >= *r) unsupported(n, "axis out of range");
    Value* iv = tensor_in(n.input(1));
    if (*ir == 1) return void(call("torch.index_select", {x, c_int(a), iv}, n));
    Value* y = method("torch.index_select", {x, c_int(a), method("Tensor.reshape", {iv, c_ints({-1})})});
    if (*ir == 0) return void(call("Tensor.squeeze", {y, c_int(a)}, n));
    auto dim = [&](const std::string& name, int64_t k) {
      auto s = known_shape(name);
      return s ? c_int((*s)[static_cast<size_t>(k)]) : size_of(name, k);
    };
    std::vector<Value*> shape;
    for (int64_t k = 0; k < a; ++k) shape.push_back(dim(n.input(0), k));
    for (int64_t k = 0; k < *ir; ++k) shape.push_back(dim(n.input(1), k));
    for (int64_t k = a + 1; k < *r; ++k) shape.push_back(dim(n.input(0), k));
    call("Tensor.reshape", {y, int_list(shape)}, n);
  }

  // ONNX keeps no padding_idx (it only changes gradients): the module gets None.
  void lift_embedding(const ox::NodeProto& n, const at::Tensor& table) {
    Node* node = append("nn.Embedding", {tensor_in(n.input(1))});
    node->set_module(module_path(n, n.input(0), "embedding"));
    node->set_scope(scope_parent(node->module()));
    Attrs& a = node->attrs();
    a.set("num_embeddings", table.size(0));
    a.set("embedding_dim", table.size(1));
    a.set("padding_idx", NoneAttr{});
    a.set("scale_grad_by_freq", false);
    a.set("sparse", false);
    module_weight(node, "weight", table, true);
    out(node, n);
  }

  void lift_cast(const ox::NodeProto& n) {
    DType d = dtype_of(static_cast<int32_t>(attr_i(n, "to", 1)));
    if (d == DType::Unknown) unsupported(n, "cast to an unsupported type");
    call("Tensor.to", {tensor_in(n.input(0)), constant(d, Type::of(Type::Kind::ScalarType)), c_bool(false),
                       c_bool(false), c_none()},
         n);
  }

  // Producer of `v` when it is `op` and `v` has no other use (so it can be replaced).
  Node* sole_producer(Value* v, const char* op) {
    Node* p = v->node();
    if (!p || !p->is(op) || v->num_uses() != 0) return nullptr;
    return p;
  }

  void lift_mul(const ox::NodeProto& n) {
    if (!is_const(n.input(0)) && !is_const(n.input(1))) {
      Value* a = tensor_in(n.input(0));
      Value* b = tensor_in(n.input(1));
      for (int k = 0; k < 2; ++k) {
        Value* x = k ? b : a;
        Value* y = k ? a : b;
        if (consumers_[n.input(k ? 0 : 1)].size() != 1) continue;
        // x * sigmoid(x) -> silu, x * hardsigmoid(x) -> hardswish
        if (Node* p = sole_producer(y, "torch.sigmoid"); p && p->input(0) == x)
          return void(call("F.silu", {x}, n));
        if (Node* p = sole_producer(y, "F.hardsigmoid"); p && p->input(0) == x)
          return void(call("F.hardswish", {x}, n));
      }
      return void(call("torch.mul", {a, b}, n));
    }
    // GELU, erf form: ((x * (erf(x / sqrt(2)) + 1)) * 0.5
    const at::Tensor* half = const_of(n, 1);
    if (half && half->numel() == 1 && std::abs(half->item<double>() - 0.5) < 1e-7 && !is_const(n.input(0)) &&
        consumers_[n.input(0)].size() == 1) {
      Value* p = tensor_in(n.input(0));
      Node* m = sole_producer(p, "torch.mul");
      if (m && m->num_inputs() == 2) {
        for (int k = 0; k < 2; ++k) {
          Value* x = m->input(static_cast<size_t>(k));
          Value* q = m->input(static_cast<size_t>(1 - k));
          if (q->num_uses() != 1) continue;
          Node* add = q->node();
          if (!add->is("torch.add") || add->num_inputs() < 2 || !add->input(1)->constant()) continue;
          const AttrValue* one = add->input(1)->constant();
          if (!std::holds_alternative<double>(*one) || std::get<double>(*one) != 1.0) continue;
          Node* erf = add->input(0)->node();
          if (!erf->is("torch.erf") || add->input(0)->num_uses() != 1) continue;
          Node* div = erf->input(0)->node();
          if (!div->is("torch.div") || div->input(0) != x || erf->input(0)->num_uses() != 1) continue;
          const AttrValue* s = div->input(1)->constant();
          if (!s || !std::holds_alternative<double>(*s) || std::abs(std::get<double>(*s) - std::sqrt(2.0)) > 1e-5)
            continue;
          return void(call("F.gelu", {x, c_str("none")}, n));
        }
      }
    }
    Value* a = operand(n, 0, n.input(1));
    Value* b = operand(n, 1, n.input(0));
    call("torch.mul", {a, b}, n);
  }

  void lift_binary(const ox::NodeProto& n) {
    const std::string& op = n.op_type();
    Value* a = operand(n, 0, n.input(1));
    Value* b = operand(n, 1, n.input(0));
    bool a_scalar = a->type().kind == Type::Kind::Float;
    if (op == "Add") {
      if (a_scalar) std::swap(a, b);
      return void(call("torch.add", {a, b, c_int(1)}, n));
    }
    if (op == "Sub") {
      if (a_scalar) return void(call("torch.rsub", {b, a, c_int(1)}, n));
      return void(call("torch.sub", {a, b, c_int(1)}, n));
    }
    if (a_scalar) a = tensor_in(n.input(0));
    if (op == "Pow") return void(call("torch.pow", {a, b}, n));
    auto it = types_.find(n.input(0));
    bool integer = it != types_.end() && it->second.dtype != DType::Unknown && it->second.dtype != DType::F32 &&
                   it->second.dtype != DType::F64 && it->second.dtype != DType::F16 && it->second.dtype != DType::BF16;
    if (integer) return void(call("torch.div", {a, b, c_str("trunc")}, n));
    call("torch.div", {a, b}, n);
  }

  // Removes nodes whose results are unused (replaced patterns, unused constants).
  void sweep() {
    std::vector<Node*> nodes = g_->block()->nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node* n = *it;
      bool used = false;
      for (Value* v : n->outputs()) used = used || v->has_uses();
      if (!used) n->destroy();
    }
    // Weights that no node reads any more.
    std::set<std::string> read;
    for (Node* n : g_->all_nodes())
      for (const auto& w : n->weights()) read.insert(w.second);
    std::vector<std::string> names = g_->weights().names();
    for (const auto& name : names)
      if (!read.count(name)) g_->weights().erase(name);
  }

  ox::ModelProto& model_;
  std::string path_;
  Diagnostics& diags_;
  std::unique_ptr<Graph> g_;
  int64_t opset_ = 0;
  int node_index_ = 0;
  std::string scope_;
  std::unordered_map<std::string, Value*> env_;
  std::unordered_map<std::string, at::Tensor> consts_;
  std::set<std::string> init_names_;
  std::unordered_map<std::string, Type> types_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<Value*>> sym_;  // Note [Dynamic shapes]
  std::set<std::string> sym_scalar_;
  std::set<int> skip_;
  std::unordered_map<std::string, std::string> weight_names_;
  std::unordered_map<std::string, std::string> module_of_weight_;
  std::set<std::string> used_modules_;
  std::vector<Value*> outputs_;
  int bn_count_ = 0;
  // The IR at the last shape probe (Note [Shapes ONNX inference leaves open]).
  Node* probed_last_ = nullptr;
  size_t probed_count_ = 0;
  int probes_ = 0;
};

}  // namespace

std::unique_ptr<Graph> load_onnx(const std::string& path, Diagnostics& diags) {
  std::string bytes = read_file(path);
  ox::ModelProto model;
  if (!model.ParseFromString(bytes))
    bad("not a valid ONNX file (the protobuf does not parse: truncated or corrupt) — re-export the model "
        "with torch.onnx.export");
  if (!model.has_graph() || model.ir_version() <= 0 || model.graph().node_size() == 0)
    bad("the protobuf is not an ONNX ModelProto (no ir_version or no graph) — pass the .onnx model "
        "file itself");
  int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset != 0 && (opset < 7 || opset > 18))
    throw Error(ExitCode::Unsupported, "ONNX opset " + std::to_string(opset) +
                                           " is outside the supported range 9-17 — re-export with "
                                           "opset_version=13");
  // Fills value_info for every intermediate the exporter left untyped (ranks pick BatchNorm1d vs
  // 2d, static shapes fold Shape sub-graphs). Best effort: a model ONNX cannot infer still loads.
  try {
    ox::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    diags.add({Severity::Note, "onnx-shape-inference",
               std::string("ONNX shape inference failed (") + first_line(e.what()) + "); shapes come from the file only",
               "", "", ""});
  }
  try {
    Importer imp(model, path, diags);
    auto g = imp.run();
    if (g->name().empty() || g->name() == "torch_jit" || g->name() == "main_graph") {
      std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
      if (base.size() > 5 && base.compare(base.size() - 5, 5, ".onnx") == 0) base.resize(base.size() - 5);
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
    throw Error(ExitCode::BadInput, std::string("the ONNX model could not be read (") + e.what() + ") — re-export it");
  }
}

#endif  // TT_HAVE_ONNX

}  // namespace tt
