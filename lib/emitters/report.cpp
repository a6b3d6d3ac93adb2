// The JSON graph report (DESIGN.md §2). Its shape is fixed by lib/emitters/report.schema.json;
// change both together (and bump kReportVersion when a field changes meaning or disappears).
//
// Conventions: an unknown or absent string (a node's module, loc, the source of an in-memory
// model) is null, never ""; the scope of a top-level node is "". Tensor dtypes use the .tir short
// names ("f32", "i64"); shapes are arrays with null for an unknown dimension, or null for an
// unknown rank. Non-finite floats in attributes are the strings "inf", "-inf", "nan" because JSON
// has no literal for them.
#include "emitters/report.h"

#include "exec/quant_engine.h"

#include "ir/op_table.h"
#include "ir/quant.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace tt {
namespace {

using json = nlohmann::ordered_json;

json str_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json dtype_json(DType d) { return d == DType::Unknown ? json(nullptr) : json(dtype_name(d)); }

DType tensor_dtype(const at::Tensor& t) {
  return dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
}

json shape_json(const std::optional<std::vector<int64_t>>& shape) {
  if (!shape) return nullptr;
  json a = json::array();
  for (int64_t d : *shape) a.push_back(d < 0 ? json(nullptr) : json(d));
  return a;
}

json sizes_json(const at::Tensor& t) {
  json a = json::array();
  for (int64_t d : t.sizes()) a.push_back(d);
  return a;
}

json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Tensors are summarised: dtype, shape, and the values only when there are a few of them.
constexpr int64_t kMaxInlineValues = 16;

json tensor_json(const at::Tensor& t) {
  json o = json::object();
  if (!t.defined()) {
    o["dtype"] = nullptr;
    o["shape"] = nullptr;
    return json{{"tensor", o}};
  }
  DType d = tensor_dtype(t);
  o["dtype"] = dtype_json(d);
  o["shape"] = sizes_json(t);
  o["numel"] = t.numel();
  bool plain = !t.is_quantized() && !t.is_complex();
  if (plain && t.numel() <= kMaxInlineValues) {
    at::Tensor flat = t.detach().to(at::kCPU).contiguous().reshape({-1});
    json values = json::array();
    if (t.is_floating_point()) {
      at::Tensor f = flat.to(at::kDouble);
      for (int64_t i = 0; i < f.numel(); ++i)
        values.push_back(number_json(f.data_ptr<double>()[i]));
    } else if (t.scalar_type() == at::kBool) {
      at::Tensor b = flat.to(at::kBool);
      for (int64_t i = 0; i < b.numel(); ++i) values.push_back(b.data_ptr<bool>()[i]);
    } else {
      at::Tensor l = flat.to(at::kLong);
      for (int64_t i = 0; i < l.numel(); ++i) values.push_back(l.data_ptr<int64_t>()[i]);
    }
    o["values"] = values;
  }
  return json{{"tensor", o}};
}

json attr_json(const AttrValue& v) {
  struct Visitor {
    json operator()(const NoneAttr&) const { return nullptr; }
    json operator()(bool b) const { return b; }
    json operator()(int64_t i) const { return i; }
    json operator()(double d) const { return number_json(d); }
    json operator()(const std::string& s) const { return s; }
    json operator()(const std::vector<int64_t>& l) const { return l; }
    json operator()(const std::vector<double>& l) const {
      json a = json::array();
      for (double d : l) a.push_back(number_json(d));
      return a;
    }
    json operator()(const std::vector<std::string>& l) const { return l; }
    json operator()(DType d) const { return json{{"dtype", dtype_json(d)}}; }
    json operator()(const DeviceAttr& d) const { return json{{"device", d.name}}; }
    json operator()(const at::Tensor& t) const { return tensor_json(t); }
  };
  return std::visit(Visitor{}, v);
}

json value_json(const Value* v) {
  const Type& t = v->type();
  return json{{"name", v->name()},
              {"type", t.str()},
              {"dtype", t.is_tensor() ? dtype_json(t.dtype) : json(nullptr)},
              {"shape", t.is_tensor() ? shape_json(t.shape) : json(nullptr)}};
}

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::Prim:
      return "prim";
    case OpKind::Module:
      return "module";
    case OpKind::Function:
      return "function";
    case OpKind::Method:
      return "method";
    case OpKind::Aten:
      return "aten";
  }
  return "unknown";
}

std::string node_kind(const Node& n) {
  if (!n.module().empty()) return "module";
  if (const OpInfo* info = n.info()) return kind_name(info->kind);
  const std::string& op = n.op();
  if (op.rfind("prim.", 0) == 0) return "prim";
  if (op.find("::") != std::string::npos) return "aten";
  if (op.rfind("Tensor.", 0) == 0) return "method";
  if (op.rfind("F.", 0) == 0 || op.rfind("torch.", 0) == 0) return "function";
  return "unknown";
}

// Adds kind/dtype/shape of weight `name` to `o` (null when the store lacks it).
json& add_weight_info(json& o, const WeightStore& ws, const std::string& name) {
  const Weight* w = ws.find(name);
  bool known = w && w->tensor.defined();
  o["kind"] = known ? json(w->is_param ? "param" : "buffer") : json(nullptr);
  o["dtype"] = known ? dtype_json(tensor_dtype(w->tensor)) : json(nullptr);
  o["shape"] = known ? sizes_json(w->tensor) : json(nullptr);
  return o;
}

json node_json(const Graph& g, const Node& n);

json block_json(const Graph& g, const Block& b) {
  json inputs = json::array(), nodes = json::array(), outputs = json::array();
  for (const Value* v : b.inputs()) inputs.push_back(value_json(v));
  for (const Node* n : b.nodes()) nodes.push_back(node_json(g, *n));
  for (const Value* v : b.outputs()) outputs.push_back(v->name());
  return json{
      {"inputs", std::move(inputs)}, {"nodes", std::move(nodes)}, {"outputs", std::move(outputs)}};
}

json node_json(const Graph& g, const Node& n) {
  json inputs = json::array(), outputs = json::array(), attrs = json::object(),
       weights = json::array();
  for (const Value* v : n.inputs()) inputs.push_back(v->name());
  for (const Value* v : n.outputs()) outputs.push_back(value_json(v));
  for (const auto& [name, value] : n.attrs().items()) attrs[name] = attr_json(value);
  for (const auto& [key, name] : n.weights()) {
    json w = {{"key", key}, {"name", name}};
    weights.push_back(std::move(add_weight_info(w, g.weights(), name)));
  }
  json o = {{"name", n.num_outputs() ? json(n.output(0)->name()) : json(nullptr)},
            {"op", n.op()},
            {"kind", node_kind(n)},
            {"module", str_or_null(n.module())},
            {"scope", n.scope()},
            {"loc", str_or_null(n.loc())},
            {"inputs", std::move(inputs)},
            {"outputs", std::move(outputs)},
            {"attrs", std::move(attrs)},
            {"weights", std::move(weights)}};
  if (!n.blocks().empty()) {
    json blocks = json::array();
    for (const auto& b : n.blocks()) blocks.push_back(block_json(g, *b));
    o["blocks"] = std::move(blocks);
  }
  return o;
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Note:
      return "note";
    case Severity::Warning:
      return "warning";
    case Severity::Error:
      return "error";
  }
  return "warning";
}

// A quantized tensor's parameters: per tensor (scale, zero_point) or per channel (scales,
// zero_points, axis).
json qparams_json(const at::Tensor& t) {
  json o = {{"dtype", dtype_name(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())))}};
  switch (t.qscheme()) {
    case at::kPerTensorAffine:
    case at::kPerTensorSymmetric:
      o["scheme"] =
          t.qscheme() == at::kPerTensorAffine ? "per_tensor_affine" : "per_tensor_symmetric";
      o["scale"] = t.q_scale();
      o["zero_point"] = t.q_zero_point();
      break;
    default: {
      o["scheme"] = t.qscheme() == at::kPerChannelAffine ? "per_channel_affine"
                                                         : "per_channel_affine_float_qparams";
      at::Tensor s = t.q_per_channel_scales().to(at::kDouble).contiguous();
      at::Tensor z = t.q_per_channel_zero_points().to(at::kLong).contiguous();
      o["scales"] = std::vector<double>(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
      o["zero_points"] =
          std::vector<int64_t>(z.data_ptr<int64_t>(), z.data_ptr<int64_t>() + z.numel());
      o["axis"] = t.q_per_channel_axis();
    }
  }
  return o;
}

}  // namespace

// Note [Quantized modules] (lib/loaders/torchscript/lifter_quantized.cpp): the engine, every
// quantized weight's parameters and every quantized module's weight and output scale and zero
// point; null for a float model.
json quantization_json(const Graph& g) {
  json weights = json::array(), modules = json::array();
  for (const std::string& name : g.weights().names()) {
    const at::Tensor& t = g.weights().at(name).tensor;
    if (!t.defined() || !t.is_quantized()) continue;
    json o = qparams_json(t);
    o["name"] = name;
    weights.push_back(std::move(o));
  }
  for (const Node* n : g.all_nodes()) {
    const std::string& op = n->op();
    if (!is_int8_module_op(op)) continue;
    json o = {{"module", n->module()}, {"op", op}};
    if (std::string w = n->weight("weight"); !w.empty() && g.weights().has(w)) {
      const at::Tensor& t = g.weights().at(w).tensor;
      if (t.defined() && t.is_quantized()) {
        o["weight"] = qparams_json(t);
        o["weight"]["name"] = w;
      }
    }
    auto number = [&](const char* key, const char* attr) -> std::optional<double> {
      if (std::string w = n->weight(key); !w.empty() && g.weights().has(w)) {
        const at::Tensor& t = g.weights().at(w).tensor;
        if (t.numel() == 1) return t.item<double>();
      }
      if (const AttrValue* a = n->attrs().find(attr)) {
        if (const double* d = std::get_if<double>(a)) return *d;
        if (const int64_t* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
      }
      return std::nullopt;
    };
    bool sigmoid = op == "nnq.Sigmoid";
    auto scale = number("scale", sigmoid ? "output_scale" : "scale");
    auto zp = number("zero_point", sigmoid ? "output_zero_point" : "zero_point");
    if (scale && zp) {
      DType dt = op == "nnq.Quantize" ? std::get<DType>(n->attrs().at("dtype")) : DType::QU8;
      o["output"] = json{{"dtype", dtype_name(dt)},
                         {"scheme", "per_tensor_affine"},
                         {"scale", *scale},
                         {"zero_point", static_cast<int64_t>(*zp)}};
    }
    modules.push_back(std::move(o));
  }
  if (weights.empty() && modules.empty()) return nullptr;
  return json{{"engine", quantized_engine()},
              {"weights", std::move(weights)},
              {"modules", std::move(modules)}};
}

json build_report(const Model& m, const ReportExtras& extras) {
  TT_ASSERT(m.graph != nullptr, "build_report needs a loaded graph");
  const Graph& g = *m.graph;

  json inputs = json::array(), outputs = json::array(), nodes = json::array(),
       weights = json::array();
  for (const Value* v : g.inputs()) inputs.push_back(value_json(v));
  for (const Value* v : g.outputs()) outputs.push_back(value_json(v));
  for (const Node* n : g.block()->nodes()) nodes.push_back(node_json(g, *n));

  int64_t param_numel = 0, buffer_numel = 0, param_tensors = 0, buffer_tensors = 0, bytes = 0;
  for (const std::string& name : g.weights().names()) {
    const Weight& w = g.weights().at(name);
    json entry = {{"name", name}};
    add_weight_info(entry, g.weights(), name);
    int64_t numel = w.tensor.defined() ? w.tensor.numel() : 0;
    int64_t nbytes = w.tensor.defined() ? static_cast<int64_t>(w.tensor.nbytes()) : 0;
    entry["numel"] = numel;
    entry["bytes"] = nbytes;
    weights.push_back(std::move(entry));
    bytes += nbytes;
    if (w.is_param) {
      param_numel += numel;
      ++param_tensors;
    } else {
      buffer_numel += numel;
      ++buffer_tensors;
    }
  }

  std::map<std::string, int64_t> histogram;
  std::set<std::string> fallbacks;
  for (const Node* n : g.all_nodes()) {
    ++histogram[n->op()];
    if (written_as_torch_ops(n->op())) fallbacks.insert(n->op());
  }
  int64_t warning_count = 0;
  json diagnostics = json::array();
  for (const Diagnostic& d : m.diags.items()) {
    if (d.severity == Severity::Warning) ++warning_count;
    diagnostics.push_back(json{{"severity", severity_name(d.severity)},
                               {"code", d.code},
                               {"message", d.message},
                               {"node", str_or_null(d.node)},
                               {"scope", str_or_null(d.scope)},
                               {"loc", str_or_null(d.loc)}});
  }

  json pipeline = json::array();
  for (const PassStat& p : extras.pipeline) {
    json log = json::array();
    for (const RewriteRecord& r : p.log)
      log.push_back(
          json{{"rule", r.rule}, {"node", str_or_null(r.node)}, {"scope", str_or_null(r.scope)}});
    pipeline.push_back(json{{"name", p.name},
                            {"changed", p.changed},
                            {"nodes_before", p.nodes_before},
                            {"nodes_after", p.nodes_after},
                            {"rewrites", p.rewrites},
                            {"milliseconds", p.milliseconds},
                            {"log", std::move(log)},
                            {"statistics", p.statistics}});
  }

  // Copies made by unshare-modules that the final graph still calls (a later pass may have
  // absorbed one, e.g. a ReLU copy folded into add_relu).
  std::set<std::string> called;
  for (const Node* n : g.all_nodes())
    if (!n->module().empty()) called.insert(n->module());
  json module_copies = json::array();
  for (const PassStat& p : extras.pipeline)
    for (const auto& [copy, original] : p.module_copies)
      if (called.count(copy))
        module_copies.push_back(json{{"module", copy}, {"copy_of", original}});

  // The original class of each module path the loader knows (Note [Module table] in ir.h).
  json module_classes = json::object();
  for (const auto& [path, info] : g.modules())
    if (!info.type.empty()) module_classes[path] = info.type;

  json report = json::object();
  report["format"] = "tinytrace-report";
  report["version"] = kReportVersion;
  report["tool"] = json{{"name", "tinytrace"}, {"version", TT_VERSION}};
  json libraries = json::array();
  for (const OpLibrary& lib : m.source.op_libraries)
    libraries.push_back(json{{"path", lib.path},
                             {"reason", lib.reason},
                             {"namespaces", lib.namespaces},
                             {"package", str_or_null(lib.package)}});
  report["source"] = json{{"path", str_or_null(m.source.path)},
                          {"format", str_or_null(m.source.format)},
                          {"sha256", str_or_null(m.source.sha256)},
                          {"op_libraries", libraries}};
  report["graph"] = json{{"name", g.name()},
                         {"inputs", std::move(inputs)},
                         {"outputs", std::move(outputs)},
                         {"nodes", std::move(nodes)},
                         {"weights", std::move(weights)}};
  report["summary"] = json{{"node_count", g.num_nodes()},    {"op_histogram", histogram},
                           {"parameter_count", param_numel}, {"parameter_tensors", param_tensors},
                           {"buffer_count", buffer_numel},   {"buffer_tensors", buffer_tensors},
                           {"weight_bytes", bytes},          {"aten_fallbacks", fallbacks},
                           {"warning_count", warning_count}};
  report["pipeline"] = std::move(pipeline);
  report["module_copies"] = std::move(module_copies);
  report["module_classes"] = std::move(module_classes);
  report["verification"] =
      extras.verification.is_null() ? json(nullptr) : json(extras.verification);
  report["diagnostics"] = std::move(diagnostics);
  report["outputs"] = extras.outputs;
  if (!extras.inference_optimization.is_null())
    report["inference_optimization"] = json(extras.inference_optimization);
  // After --quant-prep: the float fallback regions (lib/ir/quant.h).
  if (std::any_of(extras.pipeline.begin(), extras.pipeline.end(),
                  [](const PassStat& p) { return p.name == "float-fallback"; })) {
    json regions = json::array();
    for (const FloatRegion& r : float_fallback_regions(g)) {
      json names = json::array();
      std::vector<std::string> why;  // distinct reasons, first-seen order
      for (const Node* n : r.nodes) {
        names.push_back(str_or_null(n->num_outputs() ? n->output(0)->name() : ""));
        std::string reason = float_only_reason(n);
        if (!reason.empty() && std::find(why.begin(), why.end(), reason) == why.end())
          why.push_back(reason);
      }
      std::string reason = "eager-mode quantization cannot run these on quantized tensors: ";
      for (size_t i = 0; i < why.size(); ++i) reason += (i ? ", " : "") + why[i];
      regions.push_back(json{{"nodes", std::move(names)},
                             {"ops", r.ops},
                             {"scope", r.nodes.front()->scope()},
                             {"reason", reason}});
    }
    report["quant_fallback"] = regions;
  }
  if (json q = quantization_json(g); !q.is_null()) report["quantization"] = q;
  return report;
}

}  // namespace tt
