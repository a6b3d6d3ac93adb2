// The recipe toolkit of the TorchScript loader: what a recipe sees of a call on a module of a
// known torch.nn type, what it returns, and the argument readers the recipes share. One file per
// module family holds the recipes (conv.cpp, linear.cpp, norm.cpp, activation.cpp, pool.cpp,
// shape.cpp, rnn.cpp, transformer.cpp); recipes.cpp registers them by class name.
//
// Note [Leaf recipes]
// A recipe looks at the method graph of a call on a module of a known torch.nn type and returns
// the constructor keywords, or rejects. It accepts only when the graph consists of exactly the
// ATen ops nn.X.forward produces (besides constants, ListConstructs and GetAttrs of the module's
// own tensors), the data input feeds the key op, the key op's result is returned, the
// hyperparameters are constants, and the module's direct parameters/buffers are exactly the ones
// the constructor would create with those keywords. So a subclass with its own forward, or an
// instance that was modified after construction, is inlined rather than mislabelled.
#pragma once

#include "loaders/torchscript/jit_util.h"

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tt::ts {

struct LeafMatch {
  std::string op;
  Attrs attrs;
  std::set<std::string> weights;  // the direct parameters/buffers the constructor creates
  // Python-level structure of the call (the tracer flattens tuples at module boundaries).
  // The module call's arguments: empty = the method's inputs as they are; otherwise built from
  // `call_args` entries (>= 1: method input index; 0: the constant in `call_consts`, in order).
  std::vector<size_t> call_args;
  std::vector<IValue> call_consts;
  size_t hidden_inputs = 0;  // RNNs: 1 = (x, h0), 2 = LSTM (x, (h0, c0))
  // Python result structure. The tracer flattens tuples at module boundaries and drops unused
  // results: the traced method returns `flat_returned` (indexes into the flattened results), as a
  // tuple or as a single value.
  enum class Result {
    Single,
    Pair,
    OutAndPair
  } result = Result::Single;  // x / (a, b) / (a, (b, c))
  std::vector<size_t> flat_returned;
  bool returns_tuple = false;
};

struct LeafCtx {
  const MethodView& g;
  const jit::Module& module;
  std::string why;  // reason for a rejection (for the "leaf-inlined" note)

  // A tensor attribute of the module, or of a submodule by dotted path ("self_attn.in_proj_weight").
  at::Tensor tensor(const std::string& name) const {
    jit::Module m = module;
    std::string rest = name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      std::string head = rest.substr(0, dot);
      if (!m.hasattr(head) || !m.attr(head).isModule()) return {};
      m = m.attr(head).toModule();
      rest = rest.substr(dot + 1);
    }
    if (!m.hasattr(rest)) return {};
    IValue v = m.attr(rest);
    return v.isTensor() ? v.toTensor() : at::Tensor();
  }
};

using Recipe = std::function<std::optional<LeafMatch>(LeafCtx&)>;

inline std::optional<LeafMatch> reject(LeafCtx& ctx, std::string why) {
  ctx.why = std::move(why);
  return std::nullopt;
}

// Argument reader for the key node of a recipe: collects the first failure.
class Args {
 public:
  Args(LeafCtx& ctx, const jit::Node* n) : g_(ctx.g), n_(n) {}
  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }
  const jit::Value* in(size_t i) const { return n_->input(i); }

  int64_t i(size_t k) { return get(g_.as_int(in(k)), k, "an int constant"); }
  double f(size_t k) { return get(g_.as_double(in(k)), k, "a float constant"); }
  bool b(size_t k) { return get(g_.as_bool(in(k)), k, "a bool constant"); }
  std::string s(size_t k) { return get(g_.as_str(in(k)), k, "a str constant"); }
  std::vector<int64_t> ints(size_t k, size_t len) {
    auto v = get(g_.as_ints(in(k)), k, "a constant int list");
    if (ok() && v.size() != len) fail(k, "a list of " + std::to_string(len) + " ints");
    return v;
  }
  bool none(size_t k) const { return g_.is_none(in(k)); }
  // `self.<name>` (true) or None (false); anything else fails.
  bool attr_or_none(size_t k, const std::string& name) {
    if (none(k)) return false;
    auto a = g_.attr_name(in(k));
    if (!a || *a != name) fail(k, "self." + name + " or None");
    return true;
  }
  void attr(size_t k, const std::string& name) {
    auto a = g_.attr_name(in(k));
    if (!a || *a != name) fail(k, "self." + name);
  }
  void data(size_t k, size_t input_index = 1) {
    if (!g_.is_input(in(k), input_index)) fail(k, "the module's input");
  }
  void fail(size_t k, const std::string& expected) {
    if (why_.empty())
      why_ = "argument " + std::to_string(k) + " of " + kind_str(n_) + " is not " + expected;
  }

 private:
  template <typename T>
  T get(std::optional<T> v, size_t k, const char* what) {
    if (!v) {
      fail(k, what);
      return T{};
    }
    return *v;
  }
  const MethodView& g_;
  const jit::Node* n_;
  std::string why_;
};

// The single op of the method (besides constants/lists/attribute reads), of one of `kinds`,
// reading the module input and returning its result; nullptr (with ctx.why) otherwise.
const jit::Node* single_op(LeafCtx& ctx, std::initializer_list<const char*> kinds);

// Which of the key node's outputs the method returns (see LeafMatch::flat_returned).
bool match_flat_results(LeafCtx& ctx, const jit::Node* key, LeafMatch& m);

inline bool is_inplace(const jit::Node* n) {
  std::string k = kind_str(n);
  return k.back() == '_';
}

inline std::vector<int64_t> tail_sizes(const at::Tensor& t, int64_t from) {
  std::vector<int64_t> out;
  for (int64_t d = from; d < t.dim(); ++d) out.push_back(t.size(d));
  return out;
}

// ---- the recipes, by family ----

// conv.cpp
Recipe conv_recipe(int64_t dims, bool transposed);

// linear.cpp
std::optional<LeafMatch> linear_recipe(LeafCtx& ctx);
std::optional<LeafMatch> embedding_recipe(LeafCtx& ctx);

// norm.cpp
Recipe norm_recipe(std::string cls, const char* aten);
std::optional<LeafMatch> layer_norm_recipe(LeafCtx& ctx);
std::optional<LeafMatch> rms_norm_recipe(LeafCtx& ctx);
std::optional<LeafMatch> group_norm_recipe(LeafCtx& ctx);

// activation.cpp
Recipe unary_recipe(std::string cls, std::string aten, bool has_inplace);
Recipe hardtanh_recipe(bool relu6);
std::optional<LeafMatch> leaky_relu_recipe(LeafCtx& ctx);
std::optional<LeafMatch> prelu_recipe(LeafCtx& ctx);
std::optional<LeafMatch> elu_recipe(LeafCtx& ctx);
std::optional<LeafMatch> gelu_recipe(LeafCtx& ctx);
Recipe softmax_recipe(std::string cls, const char* aten);

// pool.cpp
Recipe window_pool_recipe(int64_t dims, bool max);
Recipe adaptive_pool_recipe(int64_t dims, bool max);

// shape.cpp
std::optional<LeafMatch> flatten_recipe(LeafCtx& ctx);
std::optional<LeafMatch> dropout_recipe(LeafCtx& ctx);
std::optional<LeafMatch> identity_recipe(LeafCtx& ctx);
std::optional<LeafMatch> upsample_recipe(LeafCtx& ctx);
std::optional<LeafMatch> pixel_shuffle_recipe(LeafCtx& ctx);
Recipe pad2d_recipe(bool zero);

// rnn.cpp
// nn.LSTM / nn.GRU's parameters in their flat weight order (_flat_weights_names).
std::vector<std::string> rnn_weight_names(int64_t num_layers, bool bidirectional, bool bias,
                                          bool proj);
enum class RnnKind : int8_t { LSTM, GRU, RNN };
Recipe rnn_recipe(RnnKind kind);

// transformer.cpp
std::optional<LeafMatch> mha_recipe(LeafCtx& ctx);
std::optional<LeafMatch> transformer_encoder_layer_recipe(LeafCtx& ctx);
// A scripted nn.TransformerEncoderLayer read from its attributes (its forward, with the fast-path
// checks and their messages, is not lifted): what the fused kernel of
// transformer_encoder_layer_recipe computes, for relu/gelu, packed q/k/v projections with biases
// and no dropout at work. nullopt, with `why`, for any other configuration.
std::optional<LeafMatch> scripted_encoder_layer(const jit::Module& mod, std::string& why);

// recipes.cpp: the recipe of each known torch.nn class, keyed by the class name without
// "__torch__." and mangling ("torch.nn.modules.conv.Conv2d").
const std::map<std::string, Recipe>& recipes();

}  // namespace tt::ts
