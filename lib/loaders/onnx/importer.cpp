// The ONNX importer's driver: the whole import (run), the per-node dispatch (lift), errors,
// attribute readers and ONNX tensors read into ATen.
#include "loaders/onnx/importer.h"

#include <onnx/defs/schema.h>

#if TT_HAVE_ONNX

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

namespace tt::onnx_import {

std::unique_ptr<Graph> Importer::run() {
  g_ = std::make_unique<Graph>();
  block_ = g_->block();
  opset_ = 0;
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  if (opset_ == 0) opset_ = 9;
  const ox::GraphProto& gp = model_.graph();
  graph_ = &gp;
  if (!gp.name().empty()) g_->set_name(sanitize_name(gp.name()));

  for (const auto& t : gp.initializer()) init_names_.insert(t.name());
  for (const auto& vi : gp.input()) {
    types_[vi.name()] = value_type(vi);
    if (init_names_.count(vi.name())) continue;  // an initializer listed as an input
    Value* v = g_->add_input(types_[vi.name()], value_hint(vi.name()));
    env_[vi.name()] = v;
  }
  index_graph(gp);
  lift_nodes(gp);
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
  if (bn_count_)
    diags_.add(
        {Severity::Note, "onnx-num-batches-tracked",
         "ONNX has no num_batches_tracked: the " + std::to_string(bn_count_) +
             " BatchNorm module(s) get a new int64 0 buffer (as a freshly built nn.BatchNorm)",
         "", "", ""});
  return std::move(g_);
}

// One node, in this order: a Constant (fold_constants.cpp); a node whose inputs are all constant
// (folded, fold_constants.cpp); a shape computation on run-time sizes (dynamic_shapes.cpp); else
// the handler the op table has for the op type (ops.cpp), or Unsupported.
// Note [ONNX node arity]
// The handlers read n.input(k) and n.output(k) for what the operator's schema declares; a node
// with fewer (or more) than its schema allows is malformed ONNX that the protobuf parser accepts,
// and reading past a repeated field is undefined (fuzz_onnx found a one-input Reshape reaching
// at::Tensor::to with a garbage dtype: SIGSEGV; regression input
// testdata/fuzz/onnx/crash-reshape-arity.onnx). So every node of the default domain is checked
// against the schema of the model's opset before anything reads it.
namespace {
void check_arity(const ox::NodeProto& n, int64_t opset_, const std::string& where) {
  const ox::OpSchema* s = ox::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset_), "");
  if (!s) return;  // an op ONNX does not know at this opset: the handler lookup refuses it
  auto outside = [](int k, int lo, int hi) { return k < lo || k > hi; };
  // "2 inputs", "1-3 outputs", "at least 1 input" (max is INT_MAX for variadic ops)
  auto count = [](int lo, int hi, const char* what) {
    const bool open = hi == std::numeric_limits<int>::max();
    std::string r = open       ? "at least " + std::to_string(lo)
                    : lo == hi ? std::to_string(lo)
                               : std::to_string(lo) + "-" + std::to_string(hi);
    return r + " " + what + (lo == 1 && (open || hi == 1) ? "" : "s");
  };
  if (outside(n.input_size(), s->min_input(), s->max_input()) ||
      outside(n.output_size(), s->min_output(), s->max_output()))
    bad(n.op_type() + " " + where + " has " + count(n.input_size(), n.input_size(), "input") +
        " and " + count(n.output_size(), n.output_size(), "output") + "; opset " +
        std::to_string(opset_) + " allows " + count(s->min_input(), s->max_input(), "input") +
        " and " + count(s->min_output(), s->max_output(), "output") +
        " — the ONNX file is malformed; re-export the model with torch.onnx.export");
}
}  // namespace

void Importer::lift(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    unsupported(n, "operators of domain '" + n.domain() + "' have no PyTorch mapping");
  check_arity(n, opset_, where(n));
  scope_ = path_from_node_name(n.name());
  if (op == "Constant") return lift_constant(n);
  if (try_fold(n)) return;
  if (try_symbolic(n)) return;
  const OpTable& ops = op_table();
  auto h = ops.find(op);
  if (h == ops.end()) unsupported(n, "no PyTorch mapping");
  h->second(*this, n);
  // What is computed from sizes made tensors may become sizes again (Note [Dynamic shapes]).
  for (const auto& in : n.input())
    if (sym_.count(in) || from_sym_.count(in)) {
      for (const auto& o : n.output()) from_sym_.insert(o);
      break;
    }
}

// ---- conversion helpers ----

Type Importer::value_type(const ox::ValueInfoProto& vi) {
  if (vi.type().has_sequence_type()) return Type::list(Type::tensor());
  if (vi.type().has_optional_type()) return Type::optional(Type::tensor());
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

at::Tensor Importer::to_tensor(const ox::TensorProto& t) {
  auto st = scalar_type(t.data_type());
  std::string what = "initializer/constant '" + t.name() + "'";
  if (!st)
    throw Error(ExitCode::Unsupported,
                what + " has ONNX data type " + std::to_string(t.data_type()) +
                    ", which tinytrace does not read — export with float/int tensors");
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (int64_t d : dims)
    if (d < 0) bad(what + " has a negative dimension — the file is corrupt; re-export it");
  at::Tensor out = at::empty(dims, at::TensorOptions().dtype(*st));
  size_t nbytes = static_cast<size_t>(out.numel()) * out.element_size();
  auto copy_bytes = [&](const std::string& raw) {
    if (raw.size() != nbytes)
      bad(what + " holds " + std::to_string(raw.size()) + " bytes, expected " +
          std::to_string(nbytes) + " — the file is truncated or corrupt; re-export it");
    if (nbytes) std::memcpy(out.data_ptr(), raw.data(), nbytes);
  };
  if (t.data_location() == ox::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        length = std::stoll(kv.value());
    }
    if (location.empty()) bad(what + " is stored externally but names no file — re-export it");
    std::string file = location[0] == '/' ? location : dirname_of(path_) + "/" + location;
    std::ifstream in(file, std::ios::binary);
    if (!in)
      bad(what + " is stored in '" + location +
          "', which cannot be opened — keep the external data "
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

const ox::AttributeProto* Importer::attr(const ox::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t Importer::attr_i(const ox::NodeProto& n, const char* name, int64_t def) {
  const auto* a = attr(n, name);
  return a ? a->i() : def;
}

// ONNX stores floats as float32: read back the shortest decimal that round-trips (0.1, 1e-05),
// so the generated code shows the hyperparameter as written in Python.
double Importer::attr_f(const ox::NodeProto& n, const char* name, double def) {
  const auto* a = attr(n, name);
  return a ? nice_float(a->f()) : def;
}

double Importer::nice_float(float f) {
  char buf[64];
  for (int prec = 6; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
  }
  return static_cast<double>(f);
}

std::string Importer::attr_s(const ox::NodeProto& n, const char* name, const std::string& def) {
  const auto* a = attr(n, name);
  return a ? a->s() : def;
}

std::optional<std::vector<int64_t>> Importer::attr_ints(const ox::NodeProto& n, const char* name) {
  const auto* a = attr(n, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

// ---- errors ----

std::string Importer::where(const ox::NodeProto& n) {
  return "node '" + (n.name().empty() ? "#" + std::to_string(node_index_) : n.name()) + "'";
}

[[noreturn]] void Importer::unsupported(const ox::NodeProto& n, const std::string& why) {
  throw Error(ExitCode::Unsupported,
              "ONNX op " + n.op_type() + " (" + where(n) + "): " + why +
                  " — re-export the model without it, or convert the TorchScript export instead")
      .at({n.output_size() ? n.output(0) : "", scope_, ""});
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
