// Leaf recipes of the recurrent modules: nn.LSTM, nn.GRU and nn.RNN (traced; a scripted call is
// lifted from the module's attributes, Note [Scripted RNN and attention modules]).
#include "loaders/torchscript/recipe.h"

namespace tt::ts {

// nn.LSTM / nn.GRU / nn.RNN's parameters in their flat weight order (_flat_weights_names).
std::vector<std::string> rnn_weight_names(int64_t num_layers, bool bidirectional, bool bias,
                                          bool proj) {
  std::vector<std::string> out;
  for (int64_t l = 0; l < num_layers; ++l) {
    for (int dir = 0; dir < (bidirectional ? 2 : 1); ++dir) {
      std::string sfx = "_l" + std::to_string(l) + (dir ? "_reverse" : "");
      out.push_back("weight_ih" + sfx);
      out.push_back("weight_hh" + sfx);
      if (bias) {
        out.push_back("bias_ih" + sfx);
        out.push_back("bias_hh" + sfx);
      }
      if (proj) out.push_back("weight_hr" + sfx);
    }
  }
  return out;
}

// nn.LSTM / nn.GRU / nn.RNN: aten::lstm.input(input, hx[], params[], has_biases, num_layers,
// dropout, train, bidirectional, batch_first), aten::gru.input(input, hx, params[], ...) and
// aten::rnn_tanh.input / rnn_relu.input (as gru; the op says the nonlinearity). Without an
// explicit hidden state, forward builds zeros from the batch size (size/NumToTensor/Int/zeros).
Recipe rnn_recipe(RnnKind kind) {
  return [kind](LeafCtx& ctx) -> std::optional<LeafMatch> {
    static const std::set<std::string> aux = {"aten::size", "prim::NumToTensor", "aten::Int",
                                              "aten::zeros", "prim::TupleConstruct"};
    const bool lstm = kind == RnnKind::LSTM;
    std::set<std::string> keys = {lstm                   ? "aten::lstm"
                                  : kind == RnnKind::GRU ? "aten::gru"
                                                         : "aten::rnn_tanh"};
    if (kind == RnnKind::RNN) keys.insert("aten::rnn_relu");
    const jit::Node* n = nullptr;
    for (const jit::Node* op : ctx.g.ops()) {
      std::string k = kind_str(op);
      if (keys.count(k) && !n) {
        n = op;
      } else if (!aux.count(k)) {
        return reject(ctx, "forward calls " + k);
      }
    }
    if (!n) return reject(ctx, "forward does not call " + *keys.begin());
    const c10::FunctionSchema* s = n->maybeSchema();
    if (!s || s->overload_name() != "input") return reject(ctx, "packed sequences are not lifted");
    Args a(ctx, n);
    a.data(0);
    bool has_biases = a.b(3);
    int64_t num_layers = a.i(4);
    double dropout = a.f(5);
    bool bidirectional = a.b(7);
    bool batch_first = a.b(8);
    if (!a.ok()) return reject(ctx, a.why());

    // Hidden state: built inside (zeros) or passed in (flattened by the tracer).
    size_t hidden_inputs = ctx.g.num_inputs() - 2;
    const jit::Value* hx = n->input(1);
    std::vector<const jit::Value*> hx_parts;
    if (lstm) {
      if (hx->node()->kind() != c10::prim::ListConstruct || hx->node()->inputs().size() != 2)
        return reject(ctx, "unexpected hidden state");
      for (const jit::Value* v : hx->node()->inputs()) hx_parts.push_back(v);
    } else {
      hx_parts.push_back(hx);
    }
    if (hidden_inputs == 0) {
      for (const jit::Value* v : hx_parts)
        if (kind_str(v->node()) != "aten::zeros") return reject(ctx, "unexpected hidden state");
    } else if (hidden_inputs == hx_parts.size()) {
      for (size_t i = 0; i < hx_parts.size(); ++i)
        if (!ctx.g.is_input(hx_parts[i], 2 + i)) return reject(ctx, "unexpected hidden state");
    } else {
      return reject(ctx, "unexpected inputs");
    }

    // Parameters: exactly nn.LSTM/nn.GRU's flat weight order.
    at::Tensor w_ih = ctx.tensor("weight_ih_l0");
    if (!w_ih.defined() || w_ih.dim() != 2) return reject(ctx, "no weight_ih_l0");
    bool proj = lstm && ctx.tensor("weight_hr_l0").defined();
    std::vector<std::string> expected =
        rnn_weight_names(num_layers, bidirectional, has_biases, proj);
    const jit::Node* params = n->input(2)->node();
    if (params->kind() != c10::prim::ListConstruct || params->inputs().size() != expected.size())
      return reject(ctx, "unexpected parameter list");
    for (size_t i = 0; i < expected.size(); ++i) {
      auto name = ctx.g.attr_name(params->input(i));
      if (!name || *name != expected[i]) return reject(ctx, "unexpected parameter list");
    }

    LeafMatch m;
    if (!match_flat_results(ctx, n, m)) return std::nullopt;

    int64_t gates = lstm ? 4 : kind == RnnKind::GRU ? 3 : 1;
    m.op = lstm ? "nn.LSTM" : kind == RnnKind::GRU ? "nn.GRU" : "nn.RNN";
    m.attrs.set("input_size", w_ih.size(1));
    m.attrs.set("hidden_size", w_ih.size(0) / gates);
    m.attrs.set("num_layers", num_layers);
    if (kind == RnnKind::RNN)
      m.attrs.set("nonlinearity", std::string(kind_str(n) == "aten::rnn_relu" ? "relu" : "tanh"));
    m.attrs.set("bias", has_biases);
    m.attrs.set("batch_first", batch_first);
    m.attrs.set("dropout", dropout);
    m.attrs.set("bidirectional", bidirectional);
    if (lstm) m.attrs.set("proj_size", proj ? ctx.tensor("weight_hr_l0").size(0) : int64_t{0});
    m.weights.insert(expected.begin(), expected.end());
    m.hidden_inputs = hidden_inputs;
    m.result = lstm ? LeafMatch::Result::OutAndPair : LeafMatch::Result::Pair;
    return m;
  };
}

}  // namespace tt::ts
