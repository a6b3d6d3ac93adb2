// fold-batchnorm: fold an eval-mode BatchNorm into the Conv / ConvTranspose / Linear before it.
//
// Before:
//   %c : f32[1,8,30,30] = nn.Conv2d[in_channels=3, out_channels=8, kernel_size=[3,3], ..., bias=false, padding_mode="zeros"](%x) @weight=conv.weight #module=conv
//   %b : f32[1,8,30,30] = nn.BatchNorm2d[num_features=8, eps=1.0e-05, momentum=0.1, affine=true, track_running_stats=true](%c) @weight=bn.weight @bias=bn.bias @running_mean=bn.running_mean @running_var=bn.running_var @num_batches_tracked=bn.num_batches_tracked #module=bn
//   return %b
// After:
//   %c : f32[1,8,30,30] = nn.Conv2d[in_channels=3, out_channels=8, kernel_size=[3,3], ..., bias=true, padding_mode="zeros"](%x) @weight=conv.weight @bias=conv.bias #module=conv
//   return %c
//   (weights: conv.weight rescaled, conv.bias added right after it; every bn.* entry erased)
//
// Fires when all of these hold (else the BN stays, and -vvv says why):
// - the BN is nn.BatchNorm{1,2,3}d without `training=true` and with running statistics
//   (track_running_stats is not false; running_mean/running_var weights exist);
// - its input is the only output of an nn.Conv{1,2,3}d, nn.ConvTranspose{1,2,3}d or nn.Linear
//   node in the same block, and that output has no other use (not even as a graph output);
// - the producer's module instance is called nowhere else and its weights are referenced by no
//   other node (folding would change the other calls);
// - channel counts agree (BN num_features = out channels) and weights are floating point;
//   for Linear the output must be known to be 2-d (BatchNorm1d on [N, C]; on 3-d input the BN
//   channel axis is not the Linear feature axis).
//
// Math (per output channel c, all in float64, cast back to the weight's dtype):
//   s[c]  = gamma[c] / sqrt(var[c] + eps)          (gamma = 1, beta = 0 when affine=false)
//   W'[c] = W[c] * s[c]                            along the output-channel axis of W
//   b'[c] = (b[c] - mean[c]) * s[c] + beta[c]      (b = 0 when the producer had no bias)
// Output-channel axis: dim 0 for Conv ([out, in/groups, k...]) and Linear ([out, in]); for
// ConvTranspose the weight is [in, out/groups, k...] and output channel c = g*(out/groups) + j
// lives at W[g*(in/groups) : (g+1)*(in/groups), j], so W is viewed as
// [groups, in/groups, out/groups, k...] and scaled by s viewed as [groups, 1, out/groups, 1...].
//
// The folded node keeps the producer's module path, value name, scope and loc; a new bias is
// named like the weight ("layer1.0.conv1.weight" -> "layer1.0.conv1.bias"). This changes the
// state_dict: the BN's keys disappear (expected for --fuse).
//
// Linear: reference counts of module paths and weight names are taken once; the weight store is
// rebuilt once at the end.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <ATen/ATen.h>

#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace tt {
namespace {

enum class ProducerKind { Conv, ConvTranspose, Linear };

std::optional<ProducerKind> producer_kind(const std::string& op) {
  if (op == "nn.Conv1d" || op == "nn.Conv2d" || op == "nn.Conv3d") return ProducerKind::Conv;
  if (op == "nn.ConvTranspose1d" || op == "nn.ConvTranspose2d" || op == "nn.ConvTranspose3d")
    return ProducerKind::ConvTranspose;
  if (op == "nn.Linear") return ProducerKind::Linear;
  return std::nullopt;
}

bool is_batchnorm(const Node* n) {
  return n->is("nn.BatchNorm1d") || n->is("nn.BatchNorm2d") || n->is("nn.BatchNorm3d");
}

const char* rule_for(ProducerKind k) {
  switch (k) {
    case ProducerKind::Conv: return "conv+bn";
    case ProducerKind::ConvTranspose: return "convtranspose+bn";
    case ProducerKind::Linear: return "linear+bn";
  }
  return "bn";
}

class BnFolder {
 public:
  BnFolder(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx) {
    for (Node* n : g.all_nodes()) {
      if (!n->module().empty()) ++module_calls_[n->module()];
      for (const auto& kv : n->weights()) ++weight_refs_[kv.second];
    }
  }

  bool visit(Node* bn) {
    if (!is_batchnorm(bn)) return true;
    if (try_fold(bn)) return false;
    return true;
  }

  // Applies the weight store edits collected during the walk, in one pass over the store.
  void finish() {
    if (erased_.empty() && new_bias_after_.empty()) return;
    WeightStore fresh;
    const WeightStore& old = g_.weights();
    for (const auto& name : old.names()) {
      if (!erased_.count(name)) fresh.set(name, old.at(name));
      auto it = new_bias_after_.find(name);
      if (it != new_bias_after_.end())
        for (auto& nb : it->second) fresh.set(nb.first, std::move(nb.second));
    }
    g_.weights() = std::move(fresh);
  }

  bool changed() const { return changed_; }

 private:
  bool reject(const Node* n, const char* why) {
    ctx_.reject("fold", n, why);
    return false;
  }

  const at::Tensor* weight_of(const Node* n, const char* key) {
    std::string name = n->weight(key);
    if (name.empty()) return nullptr;
    const Weight* w = g_.weights().find(name);
    return w && w->tensor.defined() ? &w->tensor : nullptr;
  }

  bool try_fold(Node* bn) {
    if (bn->num_inputs() != 1 || bn->num_outputs() != 1) return reject(bn, "unexpected inputs");
    if (bn->attrs().get_bool("training", false)) return reject(bn, "BatchNorm is in training mode");
    if (!bn->attrs().get_bool("track_running_stats", true))
      return reject(bn, "no running statistics (track_running_stats=false)");
    Value* x = bn->input(0);
    Node* p = x->node();
    auto kind = producer_kind(p->op());
    if (!kind) return reject(bn, "input is not produced by a Conv/ConvTranspose/Linear module");
    if (p->owning_block() != bn->owning_block()) return reject(bn, "producer is in another block");
    if (p->num_outputs() != 1 || !has_one_use(x)) return reject(bn, "producer's output has other uses");
    if (p->module().empty() || module_calls_[p->module()] != 1)
      return reject(bn, "producer's module instance is called more than once");

    const at::Tensor* w = weight_of(p, "weight");
    if (!w) return reject(bn, "producer has no weight");
    if (!at::isFloatingType(w->scalar_type())) return reject(bn, "producer weight is not floating point");
    const std::string w_name = p->weight("weight");
    const std::string b_name = p->weight("bias");
    if (weight_refs_[w_name] != 1 || (!b_name.empty() && weight_refs_[b_name] != 1))
      return reject(bn, "producer's weights are shared with another node");
    const at::Tensor* b = b_name.empty() ? nullptr : weight_of(p, "bias");
    if (!b_name.empty() && !b) return reject(bn, "producer's bias weight is missing");

    const at::Tensor* mean = weight_of(bn, "running_mean");
    const at::Tensor* var = weight_of(bn, "running_var");
    if (!mean || !var) return reject(bn, "running statistics are missing");
    const at::Tensor* gamma = weight_of(bn, "weight");
    const at::Tensor* beta = weight_of(bn, "bias");
    bool affine = bn->attrs().get_bool("affine", true);
    if (affine && (!gamma || !beta)) return reject(bn, "affine BatchNorm without weight/bias");
    double eps = bn->attrs().get_float("eps", 1e-5);

    // Output channels as the weight layout says.
    int64_t groups = p->attrs().get_int("groups", 1);
    if (groups < 1) return reject(bn, "bad groups");
    int64_t out_ch = 0;
    if (*kind == ProducerKind::ConvTranspose) {
      if (w->dim() < 3 || w->size(0) % groups != 0) return reject(bn, "unexpected ConvTranspose weight shape");
      out_ch = w->size(1) * groups;
    } else {
      if (w->dim() < 2) return reject(bn, "unexpected weight shape");
      out_ch = w->size(0);
    }
    if (mean->numel() != out_ch || var->numel() != out_ch || (gamma && gamma->numel() != out_ch) ||
        (beta && beta->numel() != out_ch) || (b && b->numel() != out_ch))
      return reject(bn, "channel counts differ");
    if (bn->attrs().has("num_features") && bn->attrs().get_int("num_features") != out_ch)
      return reject(bn, "num_features differs from the producer's output channels");
    if (*kind == ProducerKind::Linear) {
      const auto& s_out = shape_of(x);
      const auto& s_in = p->num_inputs() ? shape_of(p->input(0)) : shape_of(x);
      bool two_d = (s_out && s_out->size() == 2) || (s_in && s_in->size() == 2);
      if (!two_d) return reject(bn, "Linear output is not known to be 2-d");
    }

    // --- everything checked; from here on the rewrite cannot fail ---
    auto f64 = [](const at::Tensor& t) { return t.detach().to(at::kDouble).reshape({-1}); };
    at::Tensor scale = at::rsqrt(f64(*var) + eps);
    if (affine && gamma) scale = scale * f64(*gamma);
    at::Tensor bias64 = b ? f64(*b) : at::zeros({out_ch}, at::kDouble);
    at::Tensor new_b = (bias64 - f64(*mean)) * scale;
    if (affine && beta) new_b = new_b + f64(*beta);

    at::Tensor w64 = w->detach().to(at::kDouble);
    at::Tensor new_w;
    std::vector<int64_t> bshape(static_cast<size_t>(w->dim()), 1);
    if (*kind == ProducerKind::ConvTranspose) {
      std::vector<int64_t> view{groups, w->size(0) / groups, w->size(1)};
      std::vector<int64_t> sview{groups, 1, w->size(1)};
      for (int64_t d = 2; d < w->dim(); ++d) {
        view.push_back(w->size(d));
        sview.push_back(1);
      }
      new_w = (w64.reshape(view) * scale.reshape(sview)).reshape(w->sizes());
    } else {
      bshape[0] = out_ch;
      new_w = w64 * scale.reshape(bshape);
    }

    const at::ScalarType wdt = w->scalar_type();
    const at::ScalarType bdt = b ? b->scalar_type() : wdt;
    g_.weights().find(w_name)->tensor = new_w.to(wdt).contiguous();
    if (b) {
      g_.weights().find(b_name)->tensor = new_b.to(bdt).contiguous();
    } else {
      std::string hint = w_name.size() > 7 && w_name.compare(w_name.size() - 7, 7, ".weight") == 0
                             ? w_name.substr(0, w_name.size() - 7) + ".bias"
                             : p->module() + ".bias";
      std::string nb = hint;
      for (int i = 1; g_.weights().has(nb) || pending_names_.count(nb); ++i)
        nb = hint + "_" + std::to_string(i);
      pending_names_.insert(nb);
      new_bias_after_[w_name].emplace_back(nb, Weight{new_b.to(bdt).contiguous(), true});
      p->set_weight("bias", nb);
      ++weight_refs_[nb];
    }
    p->attrs().set("bias", true);

    ctx_.rewrite(rule_for(*kind), p);
    if (bn->output()->type().is_tensor() && !x->type().is_complete() && bn->output()->type().is_complete())
      x->set_type(bn->output()->type());
    bn->output()->replace_all_uses_with(x);
    for (const auto& kv : bn->weights())
      if (--weight_refs_[kv.second] == 0) erased_.insert(kv.second);
    --module_calls_[bn->module()];
    bn->destroy();
    changed_ = true;
    return true;
  }

  Graph& g_;
  PassContext& ctx_;
  std::unordered_map<std::string, int> module_calls_;
  std::unordered_map<std::string, int> weight_refs_;
  std::unordered_set<std::string> erased_;
  std::unordered_set<std::string> pending_names_;
  std::unordered_map<std::string, std::vector<std::pair<std::string, Weight>>> new_bias_after_;
  bool changed_ = false;
};

}  // namespace

bool run_fold_batchnorm(Graph& g, PassContext& ctx) {
  BnFolder f(g, ctx);
  walk_pre(g.block(), [&](Node* n) { return f.visit(n); });
  f.finish();
  return f.changed();
}

}  // namespace tt
