// Recurrent layers: LSTM, GRU and RNN (with the exporter's wrapper nodes) as nn.LSTM/nn.GRU/nn.RNN.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

// Note [ONNX LSTM/GRU]
// torch.onnx.export writes an nn.LSTM/nn.GRU/nn.RNN as one ONNX LSTM/GRU/RNN node per layer
// (RNN: activations Tanh or Relu, nn.RNN's nonlinearity), wrapped in
// Transpose (batch_first), Squeeze (unidirectional Y) or Transpose+Reshape (bidirectional Y),
// Slice (per-layer initial states) and Concat (per-layer final states). The whole chain becomes
// the one module op the TorchScript loader produces (nn.LSTM with a Tuple output and
// prim.TupleUnpack nodes), with the weights converted to PyTorch's layout and gate order.

Importer::OpList Importer::rnn_ops() {
  return {
      {"LSTM", [](Importer& im, const ox::NodeProto& n) { im.lift_rnn(n); }},
      {"GRU", [](Importer& im, const ox::NodeProto& n) { im.lift_rnn(n); }},
      {"RNN", [](Importer& im, const ox::NodeProto& n) { im.lift_rnn(n); }},
  };
}

int Importer::sole_consumer(const std::string& name) {
  int found = -1;
  for (int c : consumers_[name]) {
    if (c < 0) return -1;  // a graph output
    const ox::NodeProto& u = graph().node(c);
    // Shape reads of a statically shaped value fold away (the zero initial states).
    if (u.op_type() == "Shape" && static_shape(name)) continue;
    if (found >= 0 && found != c) return -1;
    found = c;
  }
  return found;
}

bool Importer::is_zero_const(const std::string& name) {
  fold_ahead(name);
  auto c = consts_.find(name);
  return c != consts_.end() && c->second.numel() > 0 && !c->second.ne(0).any().item<bool>();
}

// A lifted value that is zeros of a run-time shape (the exporter's initial state with a dynamic
// batch): torch.zeros(...), or an all-zero constant expanded.
bool Importer::ir_zeros(const std::string& name) {
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
at::Tensor Importer::reorder_gates(const at::Tensor& t, bool lstm) {
  int64_t gates = lstm ? 4 : 3;
  auto parts = t.chunk(gates, 0);
  std::vector<at::Tensor> order =
      lstm ? std::vector<at::Tensor>{parts[0], parts[2], parts[3], parts[1]}
           : std::vector<at::Tensor>{parts[1], parts[0], parts[2]};
  return at::cat(order, 0).contiguous();
}

void Importer::lift_rnn(const ox::NodeProto& n0) {
  const auto& gp = graph();
  bool lstm = n0.op_type() == "LSTM", gru = n0.op_type() == "GRU", plain = n0.op_type() == "RNN";
  const std::string module = "nn." + n0.op_type();
  std::string dir = attr_s(n0, "direction", "forward");
  if (dir == "reverse")
    unsupported(n0, "direction=reverse (PyTorch has no reverse-only recurrent layer)");
  bool bidir = dir == "bidirectional";
  int64_t dirs = bidir ? 2 : 1;
  int64_t hidden = attr_i(n0, "hidden_size", 0);
  std::string key = path_from_node_name(n0.name());
  // nn.RNN's nonlinearity: ONNX's one activation (Tanh by default), the same everywhere.
  std::string nonlinearity = "Tanh";
  if (const auto* acts = attr(n0, "activations"); plain && acts && acts->strings_size() > 0)
    nonlinearity = acts->strings(0);
  if (plain && nonlinearity != "Tanh" && nonlinearity != "Relu")
    unsupported(n0, "activation " + nonlinearity + " (nn.RNN has tanh or relu)");

  auto check_layer = [&](const ox::NodeProto& n) {
    if (attr_s(n, "direction", "forward") != dir || attr_i(n, "hidden_size", 0) != hidden)
      unsupported(n, "layers of different direction or hidden size");
    if (attr(n, "clip")) unsupported(n, "cell clipping (clip)");
    if (attr_i(n, "input_forget", 0) != 0) unsupported(n, "input_forget=1");
    if (attr_i(n, "layout", 0) != 0) unsupported(n, "layout=1 (export keeps the default layout)");
    if (auto acts = attr(n, "activations")) {
      std::vector<std::string> want = lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                      : gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                            : std::vector<std::string>{nonlinearity};
      for (int i = 0; i < acts->strings_size(); ++i)
        if (acts->strings(i) != want[static_cast<size_t>(i) % want.size()])
          unsupported(n, "activation " + acts->strings(i) +
                             (plain ? " (nn.RNN uses one of tanh/relu in every layer and direction)"
                                    : " (PyTorch's cells use sigmoid/tanh)"));
    }
    if (attr(n, "activation_alpha") || attr(n, "activation_beta"))
      unsupported(n, "activation_alpha/activation_beta");
    if (gru && attr_i(n, "linear_before_reset", 0) != 1)
      unsupported(
          n,
          "linear_before_reset=0 (PyTorch's GRU applies the reset gate after the linear map, "
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
               (sv[0] == 0 || (ys && sv[0] == (*ys)[0]) ||
                (sv[0] == -1 && sv[1] != -1 && sv[2] != -1)) &&
               (sv[1] == 0 || (ys && sv[1] == (*ys)[2]));
        }
        if (!ok)
          unsupported(ln, "its Y output is reshaped other than to [seq, batch, directions*hidden]");
        y_seq = r->output(0);
        absorbed.push_back(c);
        absorbed.push_back(c2);
      } else {
        unsupported(
            ln, "its Y output is used other than through the exporter's Squeeze/Transpose+Reshape");
      }
    }
    if (y_seq.empty()) break;
    int nx = sole_consumer(y_seq);
    if (nx < 0) break;
    const ox::NodeProto& nn = gp.node(nx);
    if (nn.op_type() != n0.op_type() || nn.input(0) != y_seq ||
        path_from_node_name(nn.name()) != key)
      break;
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
      if (back && back->op_type() == "Transpose" &&
          attr_ints(*back, "perm") == std::vector<int64_t>{1, 0, 2}) {
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
    if (!ok)
      unsupported(n0, "a single layer's final state is used (not the concatenation " + module +
                          " returns)");
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
    if (num_layers == 1)
      return ir_zeros(names[0]) ? std::nullopt : std::optional<std::string>(names[0]);
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
        ok = const_ahead(*s, 1) && const_ahead(*s, 2) &&
             (!has_input(*s, 3) || const_ahead(*s, 3)) && (!has_input(*s, 4) || const_ahead(*s, 4));
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
  if (lstm && h0.has_value() != c0.has_value())
    unsupported(n0, "only one of the initial h and c states is given");

  // Weights in nn.LSTM/nn.GRU/nn.RNN's order, PyTorch layout and gate order.
  const at::Tensor& w0 = *const_of(n0, 1);
  bool has_bias = false;
  for (int li : layers) has_bias = has_bias || has_input(gp.node(li), 3);
  std::vector<std::pair<std::string, at::Tensor>> params;
  int64_t gates = lstm ? 4 : gru ? 3 : 1;
  auto reorder = [&](const at::Tensor& t) {
    return plain ? t.contiguous() : reorder_gates(t, lstm);
  };
  for (size_t l = 0; l < num_layers; ++l) {
    const ox::NodeProto& ln = gp.node(layers[l]);
    const at::Tensor& W = *const_of(ln, 1);
    const at::Tensor& R = *const_of(ln, 2);
    if (W.dim() != 3 || R.dim() != 3 || W.size(0) != dirs || R.size(0) != dirs ||
        W.size(1) != gates * hidden || R.size(1) != gates * hidden || R.size(2) != hidden)
      unsupported(ln, "weights of unexpected shape");
    at::Tensor B =
        has_input(ln, 3) ? *const_of(ln, 3) : at::zeros({dirs, 2 * gates * hidden}, W.options());
    if (B.dim() != 2 || B.size(0) != dirs || B.size(1) != 2 * gates * hidden)
      unsupported(ln, "a bias of unexpected shape");
    for (int64_t d = 0; d < dirs; ++d) {
      std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      params.emplace_back("weight_ih" + sfx, reorder(W[d]));
      params.emplace_back("weight_hh" + sfx, reorder(R[d]));
      if (has_bias) {
        params.emplace_back("bias_ih" + sfx, reorder(B[d].slice(0, 0, gates * hidden)));
        params.emplace_back("bias_hh" + sfx, reorder(B[d].slice(0, gates * hidden)));
      }
    }
  }

  std::vector<Value*> ins = {tensor_in(x_name)};
  std::string path = module_path(n0, "", lstm ? "lstm" : gru ? "gru" : "rnn");
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
  Node* node = append(module, ins);
  node->set_module(path);
  Attrs& a = node->attrs();
  a.set("input_size", w0.size(2));
  a.set("hidden_size", hidden);
  a.set("num_layers", static_cast<int64_t>(num_layers));
  if (plain) a.set("nonlinearity", std::string(nonlinearity == "Tanh" ? "tanh" : "relu"));
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

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
