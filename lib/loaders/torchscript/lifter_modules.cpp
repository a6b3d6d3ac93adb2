// The TorchScript lifter (lifter.h): calls of methods and functions, inlined or, for a known
// torch.nn leaf, lifted as one module op (leaf recipes; Note [Scripted RNN and attention modules]).
#include "loaders/torchscript/lifter.h"

#include "loaders/torchscript/recipe.h"

#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/function_impl.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace tt::ts {

void Lifter::lift_call(const jit::Node* n, Frame& f) {
  auto it = f.env.find(n->input(0));
  if (it != f.env.end() && it->second.object) return lift_object_call(n, it->second.object, f);
  if (it == f.env.end() || !it->second.module)
    unsupported(n, "method call on something that is not a module", f,
                "only calls of submodules are supported");
  ModuleRef callee = *it->second.module;
  std::string method = n->s(c10::attr::name);
  auto m = callee.module.find_method(method);
  if (!m)
    unsupported(n, "module '" + callee.path + "' has no method " + method, f,
                "re-export the model");
  if (callee.path != f.self.path && try_leaf(n, callee, m->graph(), f)) return;
  std::shared_ptr<jit::Graph> g = prepared(m->graph(), callee.module, false);
  Frame sub;
  sub.self = callee;
  sub.scope = callee.path;
  lift_inlined(n, g, sub, f);
}

// The method graph `g` called by `n` (self and arguments: n's inputs), lifted in `sub`.
void Lifter::lift_inlined(const jit::Node* n, const std::shared_ptr<jit::Graph>& g, Frame& sub,
                          Frame& f) {
  if (++depth_ > 200)
    unsupported(n, "modules are nested more than 200 deep", f, "simplify the model");
  sub.caller = &f;
  sub.call = n;
  for (size_t i = 0; i < g->inputs().size() && i < n->inputs().size(); ++i)
    sub.env[g->inputs()[i]] = f.env.at(n->input(i));
  lift_block(*g->block(), sub);
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    auto r = sub.env.find(g->outputs().at(i));
    TT_ASSERT(r != sub.env.end(), "inlined method result not lifted");
    f.env[n->output(i)] = r->second;
  }
  --depth_;
}

// A TorchScript function the preparation could not inline (not a graph function).
void Lifter::lift_call_function(const jit::Node* n, Frame& f) {
  auto ft = n->input(0)->type()->cast<c10::FunctionType>();
  jit::Function* fn = ft ? ft->function() : nullptr;
  if (!fn || !fn->isGraphFunction())
    unsupported(n, "a call of a function without a TorchScript graph", f,
                "replace the call in the model");
  if (plain_name(fn->qualname().qualifiedName()) == kInterpolate && lift_interpolate(n, f)) return;
  lift_inlined(n, prepared(jit::toGraphFunction(*fn).graph(), f.self.module, false), 1, f);
}

// The call `n` of graph `g` lifted in place: g's input i is n's input i + arg_offset, n's outputs
// are g's.
void Lifter::lift_inlined(const jit::Node* n, const std::shared_ptr<jit::Graph>& g,
                          size_t arg_offset, Frame& f) {
  if (++depth_ > 200)
    unsupported(n, "calls are nested more than 200 deep", f, "simplify the model");
  Frame sub;
  sub.self = f.self;
  sub.scope = f.scope;
  sub.caller = &f;
  sub.call = n;
  sub.arg_offset = arg_offset;
  for (size_t i = 0; i < g->inputs().size() && i + arg_offset < n->inputs().size(); ++i)
    sub.env[g->inputs()[i]] = binding_of(f, n->input(i + arg_offset));
  lift_block(*g->block(), sub);
  for (size_t i = 0; i < n->outputs().size(); ++i)
    f.env[n->output(i)] = binding_of(sub, g->outputs().at(i));
  --depth_;
}

// Note [torch.jit.fork while lifting]
// `fut = torch.jit.fork(fn, args)` is prim::fork with fn's call as its subgraph, `torch.jit.wait(
// fut)` aten::wait. TorchScript may run the subgraph on another thread until the wait; eager
// Python's torch.jit.fork runs it at once. The lifter inlines the subgraph where the fork is (as
// eager Python does), and the future's value is the subgraph's result, so wait is that value.
// A forked function that raises raises at the fork instead of at the wait: the run fails either
// way. Values of the same kind: torch.jit._awaitable_nowait(x) is x, _awaitable_wait(a) a's
// value (prim::awaitable, a function run lazily at the first wait, is refused).
void Lifter::lift_fork(const jit::Node* n, Frame& f) {
  // fork(self.sub, x): the subgraph's first input is that module, whose attributes it reads.
  const jit::Module& self = !n->inputs().empty() && binding_of(f, n->input(0)).module
                                ? binding_of(f, n->input(0)).module->module
                                : f.self.module;
  lift_inlined(n, prepared(n->g(c10::attr::Subgraph), self, false), 0, f);
}

// F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
// antialias) as the F.interpolate op (its TorchScript body builds the scale list by appending
// in a loop over the input's rank), when the last two arguments leave the result as the op row
// computes it. False: inline the body instead.
bool Lifter::lift_interpolate(const jit::Node* n, Frame& f) {
  if (n->inputs().size() != 8) return false;  // the function value, then 7 arguments
  std::vector<Value*> in;
  for (size_t i = 1; i < n->inputs().size(); ++i) in.push_back(value_of(f, n->input(i), n));
  const AttrValue* recompute = in[5]->constant();
  const AttrValue* antialias = in[6]->constant();
  bool recompute_ok =
      recompute && (std::holds_alternative<NoneAttr>(*recompute) ||
                    (std::holds_alternative<bool>(*recompute) && !std::get<bool>(*recompute)));
  bool antialias_ok =
      antialias && std::holds_alternative<bool>(*antialias) && !std::get<bool>(*antialias);
  if (!recompute_ok || !antialias_ok) return false;
  Node* node = append("F.interpolate", {in[0], in[1], in[2], in[3], in[4]}, f, n);
  f.env[n->output()] =
      Binding{node->add_output(convert_type(n->output()->type()), name_hint(n->output())), {}};
  return true;
}

// Note [Scripted RNN and attention modules]
// The scripted forward of nn.LSTM / nn.GRU / nn.MultiheadAttention is mostly argument handling
// (unbatched inputs, an Optional hidden state, dim checks raising formatted messages, the fast
// path's conditions) around one ATen call; even fully inlined with its guards dropped it does
// not reduce to the single key op the recipes look for. For exactly these classes the call
// itself is lifted as the module op the traced path produces: the hyperparameters are the
// module's own attributes (torch.jit.script keeps them), its parameters must be exactly the
// ones the constructor creates from them, and the call's arguments must be a form the module op
// runs (interpreter and emitters). The op's result is the call's result, in the forward's own
// structure: (output, (h, c)), (output, h) or (attn_output, attn_weights or None). Anything
// else is inlined as before (Note [Scripted method graphs]).
bool Lifter::try_scripted_leaf(const jit::Node* call, const ModuleRef& callee,
                               const std::string& type, Frame& f) {
  const jit::Module& mod = callee.module;
  auto attr = [&](const char* name) -> IValue {
    return mod.hasattr(name) ? mod.attr(name) : IValue();
  };
  auto int_attr = [&](const char* name) -> std::optional<int64_t> {
    IValue v = attr(name);
    return v.isInt() ? std::optional<int64_t>(v.toInt()) : std::nullopt;
  };
  auto bool_attr = [&](const char* name) -> std::optional<bool> {
    IValue v = attr(name);
    return v.isBool() ? std::optional<bool>(v.toBool()) : std::nullopt;
  };
  auto double_attr = [&](const char* name) -> std::optional<double> {
    IValue v = attr(name);
    if (v.isInt()) return static_cast<double>(v.toInt());
    return v.isDouble() ? std::optional<double>(v.toDouble()) : std::nullopt;
  };
  auto is_tensor = [](const jit::Value* v) {
    return v->type()->isSubtypeOf(*c10::TensorType::get());
  };
  auto is_none = [](const jit::Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; };
  auto reject = [&](const std::string& why) {
    spdlog::debug("scripted {} ({}) not lifted as a module op: {}", callee.path, type, why);
    return false;
  };
  const bool lstm = type == "torch.nn.modules.rnn.LSTM", gru = type == "torch.nn.modules.rnn.GRU";
  const bool rnn = type == "torch.nn.modules.rnn.RNN";
  const bool mha = type == "torch.nn.modules.activation.MultiheadAttention";
  const bool enc_layer = type == "torch.nn.modules.transformer.TransformerEncoderLayer";
  if (!lstm && !gru && !rnn && !mha && !enc_layer) return false;
  // nn.LSTM / nn.GRU / nn.RNN overload forward (forward__0 takes a tensor, forward__1 a PackedSequence,
  // which the input type check below rejects).
  const std::string& method = call->s(c10::attr::name);
  if (method != "forward" && method.rfind("forward__", 0) != 0) return reject("calls " + method);
  if (call->outputs().size() != 1) return reject("unexpected results");

  LeafMatch m;  // op, attrs and the parameter names the constructor creates
  std::vector<Value*> ins;
  if (enc_layer) {
    // forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)
    std::string why;
    auto lm = scripted_encoder_layer(mod, why);
    if (!lm) return reject(why);
    if (call->inputs().size() != 5 || !is_tensor(call->input(1)))
      return reject("called with other than (src, ...)");
    if (!is_none(call->input(2)) || !is_none(call->input(3))) return reject("called with a mask");
    auto causal = jit::toIValue(call->input(4));
    if (!causal || !causal->isBool() || causal->toBool())
      return reject("is_causal is not a constant False");
    ins.push_back(value_of(f, call->input(1), call));
    m = std::move(*lm);
  } else if (lstm || gru || rnn) {
    IValue mode = attr("mode");
    IValue nonlinearity = attr("nonlinearity");  // nn.RNN: "tanh" (mode RNN_TANH) or "relu"
    std::string want_mode = lstm ? "LSTM" : gru ? "GRU" : "";
    if (rnn && nonlinearity.isString())
      want_mode = nonlinearity.toStringRef() == "tanh"   ? "RNN_TANH"
                  : nonlinearity.toStringRef() == "relu" ? "RNN_RELU"
                                                         : "";
    auto input_size = int_attr("input_size"), hidden = int_attr("hidden_size"),
         layers = int_attr("num_layers");
    auto bias = bool_attr("bias"), batch_first = bool_attr("batch_first"),
         bidir = bool_attr("bidirectional");
    auto dropout = double_attr("dropout");
    auto proj = int_attr("proj_size");
    if (!mode.isString() || want_mode.empty() || mode.toStringRef() != want_mode || !input_size ||
        !hidden || !layers || !bias || !batch_first || !bidir || !dropout || !proj)
      return reject("its attributes are not those of the torch.nn class");
    if (!lstm && *proj != 0) return reject("proj_size on a GRU or RNN");
    for (std::string& w : rnn_weight_names(*layers, *bidir, *bias, *proj > 0))
      m.weights.insert(std::move(w));
    int64_t gates = lstm ? 4 : gru ? 3 : 1;
    IValue w_ih = attr("weight_ih_l0");
    if (!w_ih.isTensor() || w_ih.toTensor().dim() != 2 ||
        w_ih.toTensor().size(0) != gates * *hidden || w_ih.toTensor().size(1) != *input_size)
      return reject("weight_ih_l0 does not match input_size/hidden_size");
    // forward(input, hx=None): hx is None, an (h0, c0) tuple (LSTM) or a tensor (GRU).
    if (call->inputs().size() != 3 || !is_tensor(call->input(1)))
      return reject("called with other than (input[, hx])");
    const jit::Value* hx = call->input(2);
    bool hx_ok = is_none(hx);
    if (!hx_ok && lstm) {
      auto tt = hx->type()->cast<c10::TupleType>();
      hx_ok = tt && tt->elements().size() == 2 &&
              std::all_of(tt->elements().begin(), tt->elements().end(), [](const c10::TypePtr& e) {
                return e->isSubtypeOf(*c10::TensorType::get());
              });
    } else if (!hx_ok) {
      hx_ok = is_tensor(hx);
    }
    if (!hx_ok)
      return reject("the hidden state is neither None nor " +
                    std::string(lstm ? "(h0, c0)" : "a tensor"));
    ins.push_back(value_of(f, call->input(1), call));
    if (!is_none(hx)) ins.push_back(value_of(f, hx, call));
    m.op = lstm ? "nn.LSTM" : gru ? "nn.GRU" : "nn.RNN";
    m.attrs.set("input_size", *input_size);
    m.attrs.set("hidden_size", *hidden);
    m.attrs.set("num_layers", *layers);
    if (rnn) m.attrs.set("nonlinearity", nonlinearity.toStringRef());
    m.attrs.set("bias", *bias);
    m.attrs.set("batch_first", *batch_first);
    m.attrs.set("dropout", *dropout);
    m.attrs.set("bidirectional", *bidir);
    if (lstm) m.attrs.set("proj_size", *proj);
  } else {
    auto embed_dim = int_attr("embed_dim"), num_heads = int_attr("num_heads");
    auto kdim = int_attr("kdim"), vdim = int_attr("vdim");
    auto same = bool_attr("_qkv_same_embed_dim"), zero_attn = bool_attr("add_zero_attn");
    auto batch_first = bool_attr("batch_first");
    auto dropout = double_attr("dropout");
    if (!embed_dim || !num_heads || !kdim || !vdim || !same || !zero_attn || !batch_first ||
        !dropout)
      return reject("its attributes are not those of the torch.nn class");
    // What the interpreter's fused kernel computes: packed q/k/v projections with biases.
    if (!*same || *kdim != *embed_dim || *vdim != *embed_dim)
      return reject("separate q/k/v projections (kdim/vdim != embed_dim)");
    if (*zero_attn || !attr("bias_k").isNone() || !attr("bias_v").isNone())
      return reject("add_bias_kv or add_zero_attn");
    if (!attr("in_proj_bias").isTensor()) return reject("bias=False");
    IValue w = attr("in_proj_weight");
    if (!w.isTensor() || w.toTensor().dim() != 2 || w.toTensor().size(0) != 3 * *embed_dim ||
        w.toTensor().size(1) != *embed_dim)
      return reject("in_proj_weight does not match embed_dim");
    m.weights = {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
    // forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    //         average_attn_weights=True[, is_causal=False] (torch >= 2.0)); TorchScript passes
    // every argument. is_causal needs a mask (the module raises without one): it must be False.
    size_t n_in = call->inputs().size();
    if ((n_in != 8 && n_in != 9) || !is_tensor(call->input(1)) || !is_tensor(call->input(2)) ||
        !is_tensor(call->input(3)))
      return reject("called with other than (query, key, value, ...)");
    if (n_in == 9) {
      auto causal = jit::toIValue(call->input(8));
      if (!causal || !causal->isBool() || causal->toBool())
        return reject("is_causal is not a constant False");
    }
    if (!is_none(call->input(4)) || !is_none(call->input(6)))
      return reject("attention with a mask");
    auto need_weights = jit::toIValue(call->input(5)), average = jit::toIValue(call->input(7));
    if (!need_weights || !need_weights->isBool() || !average || !average->isBool())
      return reject("need_weights / average_attn_weights are not constants");
    for (size_t i = 1; i <= 3; ++i) ins.push_back(value_of(f, call->input(i), call));
    // The traced form's arguments: defaults left out from the end.
    if (!need_weights->toBool() || !average->toBool()) {
      ins.push_back(constant_value(IValue(), nullptr, f, call));
      ins.push_back(constant_value(*need_weights, nullptr, f, call));
    }
    if (!average->toBool()) {
      ins.push_back(constant_value(IValue(), nullptr, f, call));
      ins.push_back(constant_value(*average, nullptr, f, call));
    }
    m.op = "nn.MultiheadAttention";
    m.attrs.set("embed_dim", *embed_dim);
    m.attrs.set("num_heads", *num_heads);
    m.attrs.set("dropout", *dropout);
    m.attrs.set("bias", true);
    m.attrs.set("add_bias_kv", false);
    m.attrs.set("add_zero_attn", false);
    m.attrs.set("kdim", *kdim);
    m.attrs.set("vdim", *vdim);
    m.attrs.set("batch_first", *batch_first);
  }
  std::vector<std::pair<std::string, bool>> own;  // (relative name, is_param), state_dict order
  collect_names(mod, "", own);
  std::set<std::string> have;
  for (const auto& o : own) have.insert(o.first);
  if (have != m.weights)
    return reject("its parameters/buffers differ from what the constructor creates");

  spdlog::debug("scripted {} lifted as {} from its attributes", callee.path, m.op);
  Node* node = append(m.op, ins, f, call);
  node->attrs() = m.attrs;
  for (const auto& o : own) node->set_weight(o.first, join_path(callee.path, o.first));
  node->set_module(callee.path);
  f.env[call->output()] = Binding{node->add_output(convert_type(call->output()->type())), {}};
  return true;
}

// A scripted nn.TransformerEncoder called without masks: its layers one after the other, each an
// nn.TransformerEncoderLayer (scripted_encoder_layer), then its norm, in the encoder's scope
// (what it computes without a src_key_padding_mask; its forward's fast-path checks and nested
// tensor conversion are not lifted). false, with a debug line, for anything else.
bool Lifter::lift_scripted_encoder(const jit::Node* call, const ModuleRef& callee, Frame& f) {
  auto reject = [&](const std::string& why) {
    spdlog::debug("scripted {} (nn.TransformerEncoder) not lifted: {}", callee.path, why);
    return false;
  };
  const jit::Module& mod = callee.module;
  // forward(src, mask=None, src_key_padding_mask=None, is_causal=None)
  if (call->s(c10::attr::name) != "forward" || call->inputs().size() != 5 ||
      call->outputs().size() != 1 || !call->input(1)->type()->isSubtypeOf(*c10::TensorType::get()))
    return reject("called with other than (src, ...)");
  for (size_t i : {2, 3})
    if (call->input(i)->type()->kind() != c10::TypeKind::NoneType)
      return reject("called with a mask");
  if (call->input(4)->type()->kind() != c10::TypeKind::NoneType) {
    auto causal = jit::toIValue(call->input(4));
    if (!causal || !causal->isBool() || causal->toBool())
      return reject("is_causal is not None or a constant False");
  }
  if (!mod.hasattr("layers") || !mod.attr("layers").isObject() || !mod.hasattr("norm"))
    return reject("its attributes are not those of the torch.nn class");
  jit::Module layers(mod.attr("layers").toObject());
  std::vector<std::pair<std::string, LeafMatch>> steps;  // (relative path, op)
  std::set<std::string> covered;
  for (const auto& child : layers.named_children()) {
    if (plain_type_name(child.value) != "torch.nn.modules.transformer.TransformerEncoderLayer")
      return reject("layer " + child.name + " is not an nn.TransformerEncoderLayer");
    std::string why;
    auto lm = scripted_encoder_layer(child.value, why);
    if (!lm) return reject("layer " + child.name + ": " + why);
    steps.emplace_back("layers." + child.name, std::move(*lm));
  }
  if (steps.empty()) return reject("no layers");
  IValue norm = mod.attr("norm");
  if (!norm.isNone()) {
    if (!norm.isObject()) return reject("its norm is not a module");
    jit::Module nm(norm.toObject());
    IValue shape = nm.hasattr("normalized_shape") ? nm.attr("normalized_shape") : IValue();
    IValue eps = nm.hasattr("eps") ? nm.attr("eps") : IValue(),
           affine = nm.hasattr("elementwise_affine") ? nm.attr("elementwise_affine") : IValue();
    if (plain_type_name(nm) != "torch.nn.modules.normalization.LayerNorm" || !eps.isDouble() ||
        !affine.isBool())
      return reject("its norm is not an nn.LayerNorm");
    std::vector<int64_t> dims;
    if (shape.isTuple()) {
      for (const IValue& e : shape.toTupleRef().elements()) {
        if (!e.isInt()) return reject("its norm's normalized_shape is not ints");
        dims.push_back(e.toInt());
      }
    } else if (shape.isIntList()) {
      dims = shape.toIntVector();
    } else {
      return reject("its norm's normalized_shape is not ints");
    }
    LeafMatch lm;
    lm.op = "nn.LayerNorm";
    lm.attrs.set("normalized_shape", dims);
    lm.attrs.set("eps", eps.toDouble());
    lm.attrs.set("elementwise_affine", affine.toBool());
    if (affine.toBool()) lm.weights = {"weight", "bias"};
    steps.emplace_back("norm", std::move(lm));
  }
  for (const auto& [path, lm] : steps)
    for (const std::string& w : lm.weights) covered.insert(path + "." + w);
  std::vector<std::pair<std::string, bool>> own;
  collect_names(mod, "", own);
  std::set<std::string> have;
  for (const auto& o : own) have.insert(o.first);
  if (have != covered)
    return reject("its parameters/buffers differ from what its layers and norm create");

  Value* x = value_of(f, call->input(1), call);
  for (const auto& [path, lm] : steps) {
    std::string module = join_path(callee.path, path);
    Node* node = append(lm.op, {x}, f, call);
    node->set_scope(callee.path);
    node->attrs() = lm.attrs;
    for (const auto& o : own)  // in state_dict order
      if (o.first.rfind(path + ".", 0) == 0)
        node->set_weight(o.first.substr(path.size() + 1), join_path(callee.path, o.first));
    node->set_module(module);
    x = node->add_output(convert_type(call->output()->type()));
  }
  spdlog::debug("scripted {} lifted as its {} layers", callee.path, steps.size());
  f.env[call->output()] = Binding{x, {}};
  return true;
}

bool Lifter::try_leaf(const jit::Node* call, const ModuleRef& callee,
                      const std::shared_ptr<jit::Graph>& method_graph, Frame& f) {
  if (try_quantized_leaf(call, callee, method_graph, f)) return true;
  std::string type = plain_type_name(callee.module);
  if (type == "torch.nn.modules.transformer.TransformerEncoder" &&
      has_script_constructs(*method_graph->block(),
                            method_graph->inputs().empty() ? nullptr : method_graph->inputs()[0]))
    return lift_scripted_encoder(call, callee, f);
  auto rit = recipes().find(type);
  if (rit == recipes().end()) return false;
  if (has_script_constructs(*method_graph->block(),
                            method_graph->inputs().empty() ? nullptr : method_graph->inputs()[0]) &&
      try_scripted_leaf(call, callee, type, f))
    return true;
  std::shared_ptr<jit::Graph> gp = prepared(method_graph, callee.module, true);
  const jit::Graph& g = *gp;
  MethodView view(g);
  LeafCtx ctx{view, callee.module, ""};
  std::optional<LeafMatch> match;
  if (!view.clean())
    ctx.why = "forward reads non-tensor attributes or has control flow";
  else
    match = rit->second(ctx);
  std::vector<std::pair<std::string, bool>> own;  // (relative name, is_param), state_dict order
  if (match) {
    collect_names(callee.module, "", own);
    std::set<std::string> have;
    for (const auto& o : own) have.insert(o.first);
    if (have != match->weights) {
      ctx.why = "its parameters/buffers differ from what the constructor creates";
      match.reset();
    }
  }
  // Dropout in eval returns its input: inplace=True writes nothing there.
  bool writes = match && match->attrs.get_bool("inplace", false) &&
                !(match->op.find("Dropout") != std::string::npos && !callee.module.is_training());
  if (writes && call->inputs().size() > 1) {
    // Note [In-place writes while lifting]: an inplace=True module on a tensor other values
    // share is inlined, so that its in-place op is kept as such.
    const Binding& b = binding_of(f, call->input(1));
    std::string why = b.value ? exclusive_write(call, call->input(1), b.value, f) : "";
    if (!why.empty()) {
      ctx.why = "inplace=True on a tensor that " + why;
      match.reset();
    }
  }
  if (!match) {
    spdlog::debug("inlining {} ({}): {}", callee.path, type, ctx.why);
    if (spdlog::should_log(spdlog::level::trace))  // printing the graph costs: only when shown
      spdlog::trace("method graph of {}:\n{}", callee.path, g.toString());
    // A call whose results are unused (e.g. an nn.Identity, which the tracer does not see) is
    // not worth a note.
    bool used = std::any_of(call->outputs().begin(), call->outputs().end(),
                            [](const jit::Value* v) { return v->hasUses(); });
    if (used && inlined_notes_.insert(callee.path).second) {
      diags_.add({Severity::Note, "leaf-inlined",
                  "module '" + callee.path + "' (" + type +
                      ") was inlined, not lifted as a module: " + ctx.why,
                  "", f.scope, node_loc(call)});
    }
    return false;
  }

  // Inputs: the call's arguments in the module's Python structure.
  std::vector<Value*> args;
  for (size_t i = 1; i < call->inputs().size(); ++i)
    args.push_back(value_of(f, call->input(i), call));
  std::vector<Value*> ins;
  if (!match->call_args.empty()) {
    size_t next_const = 0;
    for (size_t idx : match->call_args) {
      if (idx == 0)
        ins.push_back(constant_value(match->call_consts.at(next_const++), nullptr, f, call));
      else
        ins.push_back(args.at(idx - 1));
    }
  } else if (match->hidden_inputs == 2) {
    Node* t = append("prim.TupleConstruct", {args.at(1), args.at(2)}, f, call);
    Value* hc = t->add_output(Type::tuple({args[1]->type(), args[2]->type()}));
    ins = {args.at(0), hc};
  } else {
    ins = args;
  }

  Node* node = append(match->op, ins, f, call);
  node->attrs() = match->attrs;
  // Weight refs in the module's own (state_dict) order.
  for (const auto& o : own) node->set_weight(o.first, join_path(callee.path, o.first));
  node->set_module(callee.path);

  std::string out_name = call->outputs().size() == 1 ? name_hint(call->output()) : "";
  if (match->result == LeafMatch::Result::Single) {
    f.env[call->output()] =
        Binding{node->add_output(convert_type(g.outputs().at(0)->type()), out_name), {}};
    return true;
  }
  // (a, b) or (a, (b, c)) in Python; the call site saw the flattened (a, b[, c]) or the part of
  // it that was used.
  Type any = Type::any();
  bool nested = match->result == LeafMatch::Result::OutAndPair;
  Type second = nested ? Type::tuple({any, any}) : any;
  Value* r = node->add_output(Type::tuple({any, second}));
  Node* u1 = append("prim.TupleUnpack", {r}, f, call);
  std::vector<Value*> flat = {u1->add_output(any)};
  Value* b = u1->add_output(second);
  if (nested) {
    Node* u2 = append("prim.TupleUnpack", {b}, f, call);
    flat.push_back(u2->add_output(any));
    flat.push_back(u2->add_output(any));
  } else {
    flat.push_back(b);
  }
  // Types of the flattened results from the method's key node where known.
  if (!match->returns_tuple) {
    Value* v = flat.at(match->flat_returned.at(0));
    v->set_type(convert_type(g.outputs().at(0)->type()));
    f.env[call->output()] = Binding{v, {}};
    return true;
  }
  std::vector<Value*> parts;
  std::vector<Type> types;
  const auto* tt = g.outputs().at(0)->type()->cast<c10::TupleType>().get();
  for (size_t k = 0; k < match->flat_returned.size(); ++k) {
    Value* v = flat.at(match->flat_returned[k]);
    if (tt && k < tt->elements().size()) v->set_type(convert_type(tt->elements()[k]));
    parts.push_back(v);
    types.push_back(v->type());
  }
  Node* t = append("prim.TupleConstruct", parts, f, call);
  f.env[call->output()] = Binding{t->add_output(Type::tuple(types)), {}};
  return true;
}

}  // namespace tt::ts
