// infer-shapes: gives every tensor value its dtype and concrete shape by running the graph with
// the interpreter on meta tensors (shapes and dtypes, no arithmetic).
//
// Note [Shape inference on meta tensors]
// - Needs complete graph input types (convert sets them from --input-shape); otherwise the pass
//   does nothing. Weights are replaced by meta copies (Interpreter::weights_override), so no
//   weight data is touched and a whole resnet50 costs little more than a graph walk.
// - An op without a meta kernel first gets a shape rule (Note [Shape rules]); failing that, it
//   (or an op that reads tensor data, such as aten::Int) is run for real, for that node only: its
//   meta inputs become CPU zeros of the same shape and dtype, its outputs become meta tensors. Values computed from such data (a size read
//   from a zero tensor) are therefore only as good as zeros make them.
// - Only executed code gets types: values inside the branch of a prim.If that was not taken stay
//   as they were. A value seen several times (loop bodies) keeps only the dims that agree.
// - When the run cannot go on (a data-dependent branch on a meta tensor, an op that fails even
//   for real), the values computed so far keep their types and the rest stay unknown; the pass
//   says so in a warning diagnostic instead of failing the conversion.
#include "exec/dispatch.h"
#include "exec/interpreter.h"
#include "ir/module_lowering.h"
#include "ir/op_table.h"
#include "passes/pass.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <unordered_map>
#include <unordered_set>

namespace tt {
namespace {

at::ScalarType scalar_type_of(DType d) {
  return static_cast<at::ScalarType>(dtype_to_scalar_type(d));
}

bool is_meta(const at::Tensor& t) { return t.defined() && t.device().is_meta(); }

// Replaces every tensor inside `v` (lists, tuples, optionals) with f(tensor).
c10::IValue map_tensors(const c10::IValue& v,
                        const std::function<at::Tensor(const at::Tensor&)>& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    const c10::List<at::Tensor> in = v.toTensorList();
    for (at::Tensor t : in) out.push_back(f(t));  // by value: elements are proxies
    return out;
  }
  if (v.isList()) {
    auto in = v.toList();
    c10::impl::GenericList out(in.elementType());
    for (c10::IValue e : in) out.push_back(map_tensors(e, f));  // by value: elements are proxies
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const c10::IValue& e : v.toTupleRef().elements()) elems.push_back(map_tensors(e, f));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  return v;
}

at::Tensor to_real(const at::Tensor& t) {
  if (!is_meta(t)) return t;
  return at::zeros(t.sizes(), t.options().device(at::kCPU));
}

// Quantized tensors stay real (LibTorch's quantized meta tensors do not report the meta device
// and its quantized kernels have no meta versions): the ops that read them run for real.
at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined() || is_meta(t) || t.is_quantized()) return t;
  return at::empty(t.sizes(), t.options().device(at::kMeta));
}

// The Type a runtime value gives its Value; nullopt for non-tensors (their types stay).
std::optional<Type> type_of(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return std::nullopt;
    return Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())),
                        t.sizes().vec());
  }
  if (v.isTuple()) {
    // Tuples of tensors (nn.LSTM results) get per-element types; other elements stay Any.
    std::vector<Type> elems;
    bool any_tensor = false;
    for (const c10::IValue& e : v.toTupleRef().elements()) {
      auto t = type_of(e);
      any_tensor = any_tensor || t.has_value();
      elems.push_back(t ? *t : Type::any());
    }
    if (!any_tensor) return std::nullopt;
    return Type::tuple(std::move(elems));
  }
  return std::nullopt;
}

// What a run saw of a value whose type was `declared`, with the NamedTuple names of the declared
// type kept (a tuple at run time does not carry them; Note [NamedTuple types] in ir/ir.h), and,
// in a NamedTuple, its fields' declared types where the run saw less (a None field stays
// Optional[Tensor], not Any) or a narrower type (an Optional[Tensor] field that held a tensor is
// Optional[f32[3,4]]): the class's fields keep the types its definition gave them.
Type keep_named_tuples(const Type& declared, Type seen) {
  if (seen.kind != Type::Kind::Tuple || declared.kind != Type::Kind::Tuple ||
      seen.elems.size() != declared.elems.size())
    return seen;
  for (size_t i = 0; i < seen.elems.size(); ++i) {
    const Type& d = declared.elems[i];
    Type& e = seen.elems[i];
    if (declared.is_named_tuple() && (e.kind == Type::Kind::Any || e.kind == Type::Kind::None))
      e = d;
    else if (declared.is_named_tuple() && d.kind == Type::Kind::Optional && !d.elems.empty() &&
             e.kind != Type::Kind::Optional)
      e = Type::optional(keep_named_tuples(d.elems[0], std::move(e)));
    else
      e = keep_named_tuples(d, std::move(e));
  }
  seen.name = declared.name;
  seen.fields = declared.fields;
  return seen;
}

// Keeps what two observations of one value agree on (loop bodies run several times).
Type merge(const Type& a, const Type& b) {
  if (a == b) return a;
  if (a.kind != b.kind) return Type::any();
  if (a.is_tensor()) {
    Type t = Type::tensor(a.dtype == b.dtype ? a.dtype : DType::Unknown);
    if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
      std::vector<int64_t> s = *a.shape;
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] != (*b.shape)[i]) s[i] = -1;
      t.shape = std::move(s);
    }
    return t;
  }
  if (a.kind == Type::Kind::Tuple && a.elems.size() == b.elems.size()) {
    std::vector<Type> e;
    for (size_t i = 0; i < a.elems.size(); ++i) e.push_back(merge(a.elems[i], b.elems[i]));
    return Type::tuple(std::move(e));
  }
  return Type::any();
}

// Note [Shape rules]
// LibTorch 1.13's C++ meta coverage is narrower than Python's (which adds Python meta functions):
// convolution, batch_norm and relu have no C++ meta kernel. Running them for real would cost a
// real forward pass, and even trying costs a c10::Error with its backtrace (~5 ms each), so the
// ops that dominate CNNs get a shape rule here that is used before the op would run.

std::vector<int64_t> int_list(const c10::IValue& v, size_t rank, int64_t def) {
  std::vector<int64_t> out;
  if (v.isIntList())
    out = v.toIntVector();
  else if (v.isInt())
    out.assign(rank, v.toInt());
  if (out.empty()) out.assign(rank, def);
  if (out.size() == 1 && rank > 1) out.assign(rank, out[0]);
  return out;
}

// Output shape of a (transposed) convolution of x by weight w; nullopt when it does not apply.
std::optional<at::Tensor> conv_shape(const at::Tensor& x, const at::Tensor& w, size_t r,
                                     const c10::IValue& stride, const c10::IValue& padding,
                                     const c10::IValue& dilation, const c10::IValue& out_pad,
                                     int64_t groups, bool transposed) {
  if (!x.defined() || !w.defined() || w.dim() != static_cast<int64_t>(r) + 2) return std::nullopt;
  int64_t xr = x.dim();
  if (xr != static_cast<int64_t>(r) + 2 && xr != static_cast<int64_t>(r) + 1) return std::nullopt;
  auto s = int_list(stride, r, 1), d = int_list(dilation, r, 1), op = int_list(out_pad, r, 0);
  std::vector<int64_t> p;
  bool same = padding.isString() && padding.toStringRef() == "same";
  if (!padding.isString())
    p = int_list(padding, r, 0);
  else
    p.assign(r, 0);  // "valid" (and "same", handled below)
  std::vector<int64_t> out(x.sizes().begin(), x.sizes().end());
  size_t first = static_cast<size_t>(xr) - r;
  out[first - 1] = transposed ? w.size(1) * groups : w.size(0);
  for (size_t i = 0; i < r; ++i) {
    int64_t in = x.size(static_cast<int64_t>(first + i)), k = w.size(static_cast<int64_t>(2 + i));
    if (same)
      out[first + i] = in;
    else if (transposed)
      out[first + i] = (in - 1) * s[i] - 2 * p[i] + d[i] * (k - 1) + op[i] + 1;
    else
      out[first + i] = (in + 2 * p[i] - d[i] * (k - 1) - 1) / s[i] + 1;
  }
  return at::empty(out, x.options());
}

// The outputs of `n` by rule (see Note [Shape rules]), or nullopt.
std::optional<std::vector<c10::IValue>> by_rule(const Node& n, const std::vector<c10::IValue>& in,
                                                const WeightStore& meta) {
  if (in.empty() || !in[0].isTensor() || n.num_outputs() != 1) return std::nullopt;
  const at::Tensor& x = in[0].toTensor();
  const std::string& op = n.op();
  if (op_has(n, kKeepsInputShape))
    return std::vector<c10::IValue>{at::empty(x.sizes(), x.options())};
  if (op == "nn.MultiheadAttention") {
    // (query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights) ->
    // (attn_output: the query's shape, attn_weights or None). The interpreter has no lowering.
    if (in.size() < 3 || !in[1].isTensor()) return std::nullopt;
    bool need = in.size() > 4 && in[4].isBool() ? in[4].toBool() : true;
    bool average = in.size() > 6 && in[6].isBool() ? in[6].toBool() : true;
    c10::IValue weights;
    if (need) {
      const at::Tensor& k = in[1].toTensor();
      bool bf = n.attrs().get_bool("batch_first", false);
      int64_t heads = n.attrs().get_int("num_heads", 1);
      std::vector<int64_t> ws;
      if (x.dim() == 2) {
        ws = {x.size(0), k.size(0)};
        if (!average) ws.insert(ws.begin(), heads);
      } else {
        int64_t batch = bf ? x.size(0) : x.size(1), l = bf ? x.size(1) : x.size(0),
                s = bf ? k.size(1) : k.size(0);
        ws = average ? std::vector<int64_t>{batch, l, s} : std::vector<int64_t>{batch, heads, l, s};
      }
      weights = at::empty(ws, x.options());
    }
    return std::vector<c10::IValue>{
        c10::ivalue::Tuple::create({at::empty(x.sizes(), x.options()), weights})};
  }
  bool module_conv = op.rfind("nn.Conv", 0) == 0, fn_conv = op.rfind("F.conv", 0) == 0;
  if (!module_conv && !fn_conv) return std::nullopt;
  bool transposed =
      op.find("Transpose") != std::string::npos || op.find("transpose") != std::string::npos;
  size_t r = static_cast<size_t>(op.back() == 'd' ? op[op.size() - 2] - '0' : 0);
  if (r < 1 || r > 3) return std::nullopt;
  std::optional<at::Tensor> out;
  if (module_conv) {
    const Weight* w = meta.find(n.weight("weight"));
    if (!w) return std::nullopt;
    auto ints = [&](const char* key) -> c10::IValue {
      auto v = n.attrs().get_ints(key, {});
      return v.empty() ? c10::IValue() : c10::IValue(v);
    };
    c10::IValue pad = ints("padding");
    if (const AttrValue* pv = n.attrs().find("padding"))
      if (const auto* ps = std::get_if<std::string>(pv)) pad = *ps;
    out = conv_shape(x, w->tensor, r, ints("stride"), pad, ints("dilation"), ints("output_padding"),
                     n.attrs().get_int("groups", 1), transposed);
  } else {
    // F.conv{N}d(x, w, b, stride, padding, dilation, groups);
    // F.conv_transpose{N}d(x, w, b, stride, padding, output_padding, groups, dilation).
    auto at = [&](size_t i) { return i < in.size() ? in[i] : c10::IValue(); };
    if (!at(1).isTensor()) return std::nullopt;
    int64_t groups =
        transposed ? (at(6).isInt() ? at(6).toInt() : 1) : (at(6).isInt() ? at(6).toInt() : 1);
    out = transposed ? conv_shape(x, at(1).toTensor(), r, at(3), at(4), at(7), at(5), groups, true)
                     : conv_shape(x, at(1).toTensor(), r, at(3), at(4), at(5), c10::IValue(),
                                  groups, false);
  }
  if (!out) return std::nullopt;
  return std::vector<c10::IValue>{*out};
}

}  // namespace

bool run_infer_shapes(Graph& g, PassContext& ctx) {
  std::vector<c10::IValue> inputs;
  for (Value* in : g.inputs()) {
    if (!in->type().is_complete()) {
      spdlog::debug("infer-shapes: input %{} has type {} (no --input-shape?); shapes stay unknown",
                    in->name(), in->type().str());
      return false;
    }
    inputs.push_back(
        at::empty(*in->type().shape,
                  at::TensorOptions().dtype(scalar_type_of(in->type().dtype)).device(at::kMeta)));
  }

  WeightStore meta;
  for (const std::string& name : g.weights().names()) {
    const Weight& w = g.weights().at(name);
    meta.set(name, Weight{to_meta(w.tensor), w.is_param});
  }

  std::unordered_map<const Value*, Type> seen;
  size_t real_runs = 0, by_rules = 0;
  Interpreter interp(g);
  interp.weights_override = &meta;
  interp.on_value = [&](const Value* v, const c10::IValue& iv) {
    auto t = type_of(iv);
    if (!t) return;
    auto it = seen.find(v);
    if (it == seen.end())
      seen.emplace(v, std::move(*t));
    else
      it->second = merge(it->second, *t);
  };
  auto run_for_real =
      [&](const Node& n,
          const std::vector<c10::IValue>& in) -> std::optional<std::vector<c10::IValue>> {
    std::vector<c10::IValue> real;
    bool had_meta = false;
    for (const c10::IValue& v : in)
      real.push_back(map_tensors(v, [&](const at::Tensor& t) {
        had_meta = had_meta || is_meta(t);
        return to_real(t);
      }));
    // Nothing to make real (the node failed for a reason meta tensors did not cause): the
    // error stands. Module ops read meta weights, so they are always worth a real try.
    if (!had_meta && n.module().empty() && !has_module_lowering(n.op())) return std::nullopt;
    std::vector<c10::IValue> outs;
    if (!n.module().empty() || has_module_lowering(n.op())) {
      outs = run_module_op(n, g.weights(), real);
    } else {
      auto r = call_aten(n.op(), std::move(real));
      if (!r) return std::nullopt;
      outs = std::move(*r);
    }
    ++real_runs;
    spdlog::trace("infer-shapes: ran {} %{} for real (no meta kernel)", n.op(),
                  n.num_outputs() ? n.output(0)->name() : "");
    for (auto& o : outs) o = map_tensors(o, to_meta);
    return outs;
  };
  interp.intercept =
      [&](const Node& n,
          const std::vector<c10::IValue>& in) -> std::optional<std::vector<c10::IValue>> {
    // Quantized modules (nnq.*, QFunctional.*) pack their weights for the engine, which meta
    // tensors cannot: they always run for real (their float bias is a meta weight otherwise).
    const std::string& op = n.op();
    if (op.rfind("nnq.", 0) == 0 || op.rfind("nniq.", 0) == 0 || op.rfind("nnqd.", 0) == 0 ||
        op.rfind("QFunctional.", 0) == 0)
      return run_for_real(n, in);
    // Shape rules make meta results, which a quantized input cannot have (to_meta): the op runs.
    for (const c10::IValue& v : in)
      if (v.isTensor() && v.toTensor().is_quantized()) return std::nullopt;
    try {
      auto outs = by_rule(n, in, meta);
      if (outs) ++by_rules;
      return outs;
    } catch (const std::exception&) {
      return std::nullopt;  // a rule that does not fit: run the op
    }
  };

  // The node whose real run is under way: when LibTorch's error escapes from it, the warning
  // names it (a real run's error is LibTorch's, not a located tt::Error).
  const Node* running_for_real = nullptr;
  interp.on_failure =
      [&](const Node& n,
          const std::vector<c10::IValue>& in) -> std::optional<std::vector<c10::IValue>> {
    running_for_real = &n;
    auto outs = run_for_real(n, in);
    running_for_real = nullptr;
    return outs;
  };

  try {
    interp.run(inputs);
  } catch (const std::exception& e) {
    const std::string stopped = "shape inference stopped early, later values keep unknown shapes: ";
    // An op the interpreter cannot run: the message says which, the warning records where.
    if (const auto* err = dynamic_cast<const Error*>(&e)) {
      const Location& at = err->where();
      ctx.diags().warn("infer-shapes", stopped + e.what(), at.node, at.scope, at.loc);
    } else {  // LibTorch rejected the shapes; one line (its messages carry a C++ backtrace)
      std::string msg = e.what();
      Location at = running_for_real ? location_of(*running_for_real) : Location{};
      ctx.diags().warn("infer-shapes",
                       stopped + msg.substr(0, msg.find('\n')) +
                           " — check that --input-shape matches what the model expects",
                       at.node, at.scope, at.loc);
    }
  }

  bool changed = false;
  for (auto& [v, observed] : seen) {
    Type t = keep_named_tuples(v->type(), observed);
    if (v->type() == t) continue;
    const_cast<Value*>(v)->set_type(t);
    changed = true;
  }
  spdlog::debug("infer-shapes: {} value(s) typed, {} node(s) by shape rule, {} run for real",
                seen.size(), by_rules, real_runs);
  ctx.statistic("values typed", static_cast<int64_t>(seen.size()));
  ctx.statistic("nodes by shape rule", static_cast<int64_t>(by_rules));
  ctx.statistic("nodes run for real", static_cast<int64_t>(real_runs));
  return changed;
}

}  // namespace tt
