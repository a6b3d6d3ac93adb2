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

#include "support/json_writer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace tt {
namespace {

using json = nlohmann::ordered_json;

DType tensor_dtype(const at::Tensor& t) {
  return dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
}

void write_dtype(JsonWriter& w, DType d) {
  if (d == DType::Unknown)
    w.null();
  else
    w.string(dtype_name(d));
}

// A float that may be non-finite: JSON has no literal for inf and nan, they are strings.
void write_attr_number(JsonWriter& w, double v) {
  if (std::isnan(v))
    w.string("nan");
  else if (std::isinf(v))
    w.string(v > 0 ? "inf" : "-inf");
  else
    w.number(v);
}

void write_shape(JsonWriter& w, const std::optional<std::vector<int64_t>>& shape) {
  if (!shape) {
    w.null();
    return;
  }
  w.begin_array();
  for (int64_t d : *shape) d < 0 ? w.null() : w.integer(d);
  w.end_array();
}

void write_sizes(JsonWriter& w, const at::Tensor& t) {
  w.begin_array();
  for (int64_t d : t.sizes()) w.integer(d);
  w.end_array();
}

// Tensors are summarised: dtype, shape, and the values only when there are a few of them.
constexpr int64_t kMaxInlineValues = 16;

void write_tensor(JsonWriter& w, const at::Tensor& t) {
  w.begin_object().key("tensor").begin_object();
  if (!t.defined()) {
    w.member("dtype", nullptr).member("shape", nullptr).end_object().end_object();
    return;
  }
  w.key("dtype");
  write_dtype(w, tensor_dtype(t));
  w.key("shape");
  write_sizes(w, t);
  w.member("numel", int64_t(t.numel()));
  bool plain = !t.is_quantized() && !t.is_complex();
  if (plain && t.numel() <= kMaxInlineValues) {
    at::Tensor flat = t.detach().to(at::kCPU).contiguous().reshape({-1});
    w.key("values").begin_array();
    if (t.is_floating_point()) {
      at::Tensor f = flat.to(at::kDouble);
      for (int64_t i = 0; i < f.numel(); ++i) write_attr_number(w, f.data_ptr<double>()[i]);
    } else if (t.scalar_type() == at::kBool) {
      at::Tensor b = flat.to(at::kBool);
      for (int64_t i = 0; i < b.numel(); ++i) w.boolean(b.data_ptr<bool>()[i]);
    } else {
      at::Tensor l = flat.to(at::kLong);
      for (int64_t i = 0; i < l.numel(); ++i) w.integer(l.data_ptr<int64_t>()[i]);
    }
    w.end_array();
  }
  w.end_object().end_object();
}

void write_attr(JsonWriter& w, const AttrValue& v) {
  struct Visitor {
    JsonWriter& w;
    void operator()(const NoneAttr&) const { w.null(); }
    void operator()(bool b) const { w.boolean(b); }
    void operator()(int64_t i) const { w.integer(i); }
    void operator()(double d) const { write_attr_number(w, d); }
    void operator()(const std::string& s) const { w.string(s); }
    void operator()(const std::vector<int64_t>& l) const { w.write(l); }
    void operator()(const std::vector<double>& l) const {
      w.begin_array();
      for (double d : l) write_attr_number(w, d);
      w.end_array();
    }
    void operator()(const std::vector<std::string>& l) const { w.write(l); }
    void operator()(DType d) const {
      w.begin_object().key("dtype");
      write_dtype(w, d);
      w.end_object();
    }
    void operator()(const DeviceAttr& d) const {
      w.begin_object().member("device", d.name).end_object();
    }
    void operator()(const at::Tensor& t) const { write_tensor(w, t); }
    void operator()(const std::complex<double>& z) const {
      w.begin_object().key("complex").begin_array();
      write_attr_number(w, z.real());
      write_attr_number(w, z.imag());
      w.end_array().end_object();
    }
  };
  std::visit(Visitor{w}, v);
}

// `dflt`: a graph input's default (Note [Forward defaults] in ir/ir.h), written as "default".
void write_value(JsonWriter& w, const Value* v, const AttrValue* dflt = nullptr) {
  const Type& t = v->type();
  w.begin_object(JsonWriter::Inline).member("name", v->name()).member("type", t.str()).key("dtype");
  if (t.is_tensor())
    write_dtype(w, t.dtype);
  else
    w.null();
  w.key("shape");
  if (t.is_tensor())
    write_shape(w, t.shape);
  else
    w.null();
  if (dflt) {
    w.key("default");
    write_attr(w, *dflt);
  }
  w.end_object();
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

const char* node_kind(const Node& n) {
  if (!n.module().empty()) return "module";
  if (const OpInfo* info = n.info()) return kind_name(info->kind);
  const std::string& op = n.op();
  if (op.rfind("prim.", 0) == 0) return "prim";
  if (op.find("::") != std::string::npos) return "aten";
  if (op.rfind("Tensor.", 0) == 0) return "method";
  if (op.rfind("F.", 0) == 0 || op.rfind("torch.", 0) == 0) return "function";
  return "unknown";
}

// Writes the members kind/dtype/shape of weight `name` (null when the store lacks it).
void write_weight_info(JsonWriter& w, const WeightStore& ws, const std::string& name) {
  const Weight* wt = ws.find(name);
  if (!wt || !wt->tensor.defined()) {
    w.member("kind", nullptr).member("dtype", nullptr).member("shape", nullptr);
    return;
  }
  w.member("kind", wt->is_param ? "param" : "buffer").key("dtype");
  write_dtype(w, tensor_dtype(wt->tensor));
  w.key("shape");
  write_sizes(w, wt->tensor);
}

void write_node(JsonWriter& w, const Graph& g, const Node& n);

// Note [One record per line] in lib/support/json_writer.h: a node is one line, its blocks'
// nodes each one line below it.
void write_block(JsonWriter& w, const Graph& g, const Block& b) {
  w.begin_object(JsonWriter::Inline).key("inputs").begin_array();
  for (const Value* v : b.inputs()) write_value(w, v);
  w.end_array().key("nodes").begin_array(JsonWriter::Indented);
  for (const Node* n : b.nodes()) write_node(w, g, *n);
  w.end_array().key("outputs").begin_array();
  for (const Value* v : b.outputs()) w.string(v->name());
  w.end_array().end_object();
}

void write_node(JsonWriter& w, const Graph& g, const Node& n) {
  w.begin_object(JsonWriter::Inline).key("name");
  if (n.num_outputs())
    w.string(n.output(0)->name());
  else
    w.null();
  w.member("op", n.op()).member("kind", node_kind(n));
  w.key("module").string_or_null(n.module());
  w.member("scope", n.scope());
  w.key("loc").string_or_null(n.loc());
  w.key("inputs").begin_array();
  for (const Value* v : n.inputs()) w.string(v->name());
  w.end_array().key("outputs").begin_array();
  for (const Value* v : n.outputs()) write_value(w, v);
  w.end_array().key("attrs").begin_object();
  for (const auto& [name, value] : n.attrs().items()) {
    w.key(name);
    write_attr(w, value);
  }
  w.end_object().key("weights").begin_array();
  for (const auto& [key, name] : n.weights()) {
    w.begin_object().member("key", key).member("name", name);
    write_weight_info(w, g.weights(), name);
    w.end_object();
  }
  w.end_array();
  if (!n.blocks().empty()) {
    w.key("blocks").begin_array(JsonWriter::Indented);
    for (const auto& b : n.blocks()) write_block(w, g, *b);
    w.end_array();
  }
  w.end_object();
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

std::string attr_json(const AttrValue& v) {
  std::string out;
  JsonWriter w(out);
  write_attr(w, v);
  return out;
}

ReportGraph render_report_graph(const Graph& g) {
  ReportGraph r;
  JsonWriter w(r.text, 1);  // the value of the top-level "graph"
  w.begin_object().member("name", g.name()).key("inputs").begin_array();
  for (const Value* v : g.inputs()) write_value(w, v, g.input_default(v));
  w.end_array().key("outputs").begin_array();
  for (const Value* v : g.outputs()) write_value(w, v);
  w.end_array().key("nodes").begin_array();
  for (const Node* n : g.block()->nodes()) write_node(w, g, *n);
  w.end_array().key("weights").begin_array();
  for (const std::string& name : g.weights().names()) {
    const Weight& wt = g.weights().at(name);
    int64_t numel = wt.tensor.defined() ? wt.tensor.numel() : 0;
    int64_t nbytes = wt.tensor.defined() ? static_cast<int64_t>(wt.tensor.nbytes()) : 0;
    w.begin_object(JsonWriter::Inline).member("name", name);
    write_weight_info(w, g.weights(), name);
    w.member("numel", numel).member("bytes", nbytes).end_object();
    r.weight_bytes += nbytes;
    if (wt.is_param) {
      r.param_numel += numel;
      ++r.param_tensors;
    } else {
      r.buffer_numel += numel;
      ++r.buffer_tensors;
    }
  }
  w.end_array().end_object();
  // One walk for the histogram, the fallbacks and the modules the final graph calls.
  for (const Node* n : g.all_nodes()) {
    ++r.histogram[n->op()];
    if (written_as_torch_ops(n->op())) r.fallbacks.insert(n->op());
    if (!n->module().empty()) r.called.insert(n->module());
  }
  r.quantization = quantization_json(g);
  return r;
}

void write_report(std::string& out, const Model& m, const ReportExtras& extras) {
  TT_ASSERT(m.graph != nullptr, "write_report needs a loaded graph");
  write_report(out, m, extras, render_report_graph(*m.graph));
}

void write_report(std::string& out, const Model& m, const ReportExtras& extras,
                  const ReportGraph& graph) {
  std::string around;
  size_t k = write_report_around(around, m, extras, graph);
  out.reserve(out.size() + around.size() + graph.text.size());
  out.append(around, 0, k).append(graph.text).append(around, k);
}

size_t write_report_around(std::string& out, const Model& m, const ReportExtras& extras,
                           const ReportGraph& graph) {
  TT_ASSERT(m.graph != nullptr, "write_report needs a loaded graph");
  const Graph& g = *m.graph;
  JsonWriter w(out);

  w.begin_object();
  w.member("format", "tinytrace-report").member("version", int64_t(kReportVersion));
  w.key("tool").begin_object().member("name", "tinytrace").member("version", TT_VERSION);
  w.end_object();
  w.key("source").begin_object();
  w.key("path").string_or_null(m.source.path);
  w.key("format").string_or_null(m.source.format);
  w.key("sha256").string_or_null(m.source.sha256);
  w.key("op_libraries").begin_array();
  for (const OpLibrary& lib : m.source.op_libraries) {
    w.begin_object().member("path", lib.path).member("reason", lib.reason);
    w.member("namespaces", lib.namespaces).key("package").string_or_null(lib.package);
    w.end_object();
  }
  w.end_array().end_object();

  w.key("graph").raw("");  // graph.text goes here
  size_t graph_at = out.size();

  int64_t warning_count = 0;
  for (const Diagnostic& d : m.diags.items())
    if (d.severity == Severity::Warning) ++warning_count;
  w.key("summary").begin_object().member("node_count", uint64_t(g.num_nodes()));
  w.key("op_histogram").begin_object();
  for (const auto& [op, count] : graph.histogram) w.member(op, count);
  w.end_object();
  w.member("parameter_count", graph.param_numel).member("parameter_tensors", graph.param_tensors);
  w.member("buffer_count", graph.buffer_numel).member("buffer_tensors", graph.buffer_tensors);
  w.member("weight_bytes", graph.weight_bytes).key("aten_fallbacks").begin_array();
  for (const std::string& op : graph.fallbacks) w.string(op);
  w.end_array().member("warning_count", warning_count).end_object();

  w.key("pipeline").begin_array();
  for (const PassStat& p : extras.pipeline) {
    w.begin_object().member("name", p.name).member("changed", p.changed);
    w.member("nodes_before", uint64_t(p.nodes_before))
        .member("nodes_after", uint64_t(p.nodes_after));
    w.member("rewrites", uint64_t(p.rewrites)).member("milliseconds", p.milliseconds);
    w.key("log").begin_array();
    for (const RewriteRecord& r : p.log) {
      w.begin_object(JsonWriter::Inline).member("rule", r.rule);
      w.key("node").string_or_null(r.node);
      w.key("scope").string_or_null(r.scope);
      w.end_object();
    }
    w.end_array().key("statistics").begin_object();
    for (const auto& [name, count] : p.statistics) w.member(name, count);
    w.end_object().end_object();
  }
  w.end_array();

  // Copies made by unshare-modules that the final graph still calls (a later pass may have
  // absorbed one, e.g. a ReLU copy folded into add_relu).
  w.key("module_copies").begin_array();
  for (const PassStat& p : extras.pipeline)
    for (const auto& [copy, original] : p.module_copies)
      if (graph.called.count(copy))
        w.begin_object().member("module", copy).member("copy_of", original).end_object();
  w.end_array();

  // The original class of each module path the loader knows (Note [Module table] in ir.h).
  w.key("module_classes").begin_object();
  for (const auto& [path, info] : g.modules())
    if (!info.type.empty()) w.member(path, info.type);
  w.end_object();
  w.member("verification", extras.verification);
  w.key("diagnostics").begin_array();
  for (const Diagnostic& d : m.diags.items()) {
    w.begin_object(JsonWriter::Inline)
        .member("severity", severity_name(d.severity))
        .member("code", d.code);
    w.member("message", d.message).key("node").string_or_null(d.node);
    w.key("scope").string_or_null(d.scope);
    w.key("loc").string_or_null(d.loc);
    w.end_object();
  }
  w.end_array().member("outputs", extras.outputs);
  if (!extras.inference_optimization.is_null())
    w.member("inference_optimization", extras.inference_optimization);
  // After --quant-prep: the float fallback regions (lib/ir/quant.h).
  if (std::any_of(extras.pipeline.begin(), extras.pipeline.end(),
                  [](const PassStat& p) { return p.name == "float-fallback"; })) {
    w.key("quant_fallback").begin_array();
    for (const FloatRegion& r : float_fallback_regions(g)) {
      std::vector<std::string> why;  // distinct reasons, first-seen order
      w.begin_object().key("nodes").begin_array();
      for (const Node* n : r.nodes) {
        if (n->num_outputs())
          w.string_or_null(n->output(0)->name());
        else
          w.null();
        std::string reason = float_only_reason(n);
        if (!reason.empty() && std::find(why.begin(), why.end(), reason) == why.end())
          why.push_back(reason);
      }
      std::string reason = "eager-mode quantization cannot run these on quantized tensors: ";
      for (size_t i = 0; i < why.size(); ++i) reason += (i ? ", " : "") + why[i];
      w.end_array().member("ops", r.ops).member("scope", r.nodes.front()->scope());
      w.member("reason", reason).end_object();
    }
    w.end_array();
  }
  if (!graph.quantization.is_null()) w.member("quantization", graph.quantization);
  w.end_object();
  out += '\n';
  return graph_at;
}

json build_report(const Model& m, const ReportExtras& extras) {
  std::string text;
  write_report(text, m, extras);
  return json::parse(text);
}

}  // namespace tt
