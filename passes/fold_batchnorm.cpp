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
//   channel axis is not the Linear feature axis) — from the types, or because the Linear's input
//   comes from flatten(start_dim=1) or a view/reshape to two sizes (pass_util.h rank_of).
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
// Linear: candidates are found in one walk; reference counts of just their module paths and
// weight names are taken in a second walk; the weight store is rebuilt once at the end.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>

#include <cmath>
#include <memory_resource>
#include <string_view>
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
    case ProducerKind::Conv:
      return "conv+bn";
    case ProducerKind::ConvTranspose:
      return "convtranspose+bn";
    case ProducerKind::Linear:
      return "linear+bn";
  }
  return "bn";
}

class BnFolder {
 public:
  BnFolder(Graph& g, PassContext& ctx) : g_(g), rw_(ctx) {}

  bool run() {
    // 1. Candidates: everything that can be checked on the pair alone.
    walk_pre(g_.block(), [&](Node* n) {
      if (is_batchnorm(n))
        rw_.run("fold", n, check_pair(n), [&](Candidate& c) { cands_.push_back(c); });
      return true;
    });
    if (cands_.empty()) return false;
    count_references();
    // 2. Fold. BN nodes are only unlinked from their users here and destroyed at the end: the
    // reference tables hold views of their weight names.
    std::vector<Node*> dead;
    for (const auto& c : cands_)
      if (rw_.run("fold", c.bn, check_unshared(c), [&](const Candidate* cp) { fold(*cp); }))
        dead.push_back(c.bn);
    // 3. The BN entries go (Note [Erasing the folded BatchNorms' weights]), the new biases are
    // spliced in with one pass over the store; then the new bias references (they would move
    // the strings the tables view) and the BN nodes go.
    for (const std::string* name : erased_) g_.weights().erase(*name);
    g_.weights().apply(std::move(edits_));
    for (auto& nb : new_bias_refs_) nb.first->set_weight("bias", nb.second);
    for (Node* bn : dead) bn->destroy();
    return !dead.empty();
  }

 private:
  struct Candidate {
    Node* bn;
    Node* p;  // the producer
    ProducerKind kind;
    // Entries of the weight store (stable until the edits are applied); b/gamma/beta may be null.
    Weight *w, *b, *mean, *var, *gamma, *beta;
  };

  // The state_dict name node `n` refers to as `key`, as a view of the node's own string.
  static std::string_view ref_of(const Node* n, const char* key) {
    for (const auto& kv : n->weights())
      if (kv.first == key) return kv.second;
    return {};
  }

  Weight* weight_of(const Node* n, const char* key) {
    std::string_view name = ref_of(n, key);
    if (name.empty()) return nullptr;
    key_.assign(name);  // one buffer for every lookup: no allocation per name
    Weight* w = g_.weights().find(key_);
    return w && w->tensor.defined() ? w : nullptr;
  }

  // Reference counts of the candidates' producer modules and of the weights they touch, from one
  // walk over the graph. Only names of candidates are counted, so the tables stay small.
  //
  // Note [Counting the candidates' own references]
  // The candidates' own nodes (each producer and BatchNorm belongs to one candidate) are counted
  // from the candidate list; the walk counts the other nodes only and recognises the candidates'
  // nodes by pointer. Each node is still counted once, but a candidate's names are hashed once
  // (++count) instead of twice (entry, then a lookup from the walk): on the 1M-node graph of
  // scripts/bench_passes.sh that is ~10^6 fewer string lookups in tables far larger than the
  // caches (issue #22), against lookups of pointers in a table of 2 per candidate.
  void count_references() {
    // Sized once: a candidate adds one module and up to seven weight names (no rehash series).
    module_calls_.reserve(cands_.size());
    weight_refs_.reserve(cands_.size() * 7);
    cand_nodes_.reserve(cands_.size() * 2);
    // The edits: at most one new bias and the BN's (usually five) names per candidate.
    pending_names_.reserve(cands_.size());
    edits_.insert_after.reserve(cands_.size());
    erased_.reserve(cands_.size() * 5);
    auto count_weights = [&](const Node* n) {
      for (const auto& kv : n->weights()) ++weight_refs_[kv.second];
    };
    for (const auto& c : cands_) {
      if (cand_nodes_.insert(c.p).second) {
        ++module_calls_[c.p->module()];  // only producer ops can call a producer module
        count_weights(c.p);
      }
      if (cand_nodes_.insert(c.bn).second) count_weights(c.bn);
    }
    walk_pre(g_.block(), [&](Node* n) {
      if (cand_nodes_.count(n)) return true;  // counted above
      if (!n->module().empty() && producer_kind(n->op())) {
        auto it = module_calls_.find(n->module());
        if (it != module_calls_.end()) ++it->second;
      }
      for (const auto& kv : n->weights()) {
        auto it = weight_refs_.find(kv.second);
        if (it != weight_refs_.end()) ++it->second;
      }
      return true;
    });
  }

  // The check on the pair alone.
  Match<Candidate> check_pair(Node* bn) {
    if (bn->num_inputs() != 1 || bn->num_outputs() != 1) return Reject("unexpected inputs");
    if (bn->attrs().get_bool("training", false)) return Reject("BatchNorm is in training mode");
    if (!bn->attrs().get_bool("track_running_stats", true))
      return Reject("no running statistics (track_running_stats=false)");
    Value* x = bn->input(0);
    Node* p = x->node();
    auto kind = producer_kind(p->op());
    if (!kind) return Reject("input is not produced by a Conv/ConvTranspose/Linear module");
    if (p->owning_block() != bn->owning_block()) return Reject("producer is in another block");
    if (p->num_outputs() != 1 || !has_one_use(x)) return Reject("producer's output has other uses");
    if (p->module().empty()) return Reject("producer has no module path");

    Weight* ww = weight_of(p, "weight");
    if (!ww) return Reject("producer has no weight");
    const at::Tensor* w = &ww->tensor;
    if (!at::isFloatingType(w->scalar_type()))
      return Reject("producer weight is not floating point");
    Weight* wb = ref_of(p, "bias").empty() ? nullptr : weight_of(p, "bias");
    if (!ref_of(p, "bias").empty() && !wb) return Reject("producer's bias weight is missing");
    Weight* wmean = weight_of(bn, "running_mean");
    Weight* wvar = weight_of(bn, "running_var");
    if (!wmean || !wvar) return Reject("running statistics are missing");
    bool affine = bn->attrs().get_bool("affine", true);
    Weight* wgamma = affine ? weight_of(bn, "weight") : nullptr;
    Weight* wbeta = affine ? weight_of(bn, "bias") : nullptr;
    if (affine && (!wgamma || !wbeta)) return Reject("affine BatchNorm without weight/bias");
    auto t = [](Weight* x) { return x ? &x->tensor : nullptr; };
    const at::Tensor *b = t(wb), *mean = t(wmean), *var = t(wvar), *gamma = t(wgamma),
                     *beta = t(wbeta);

    int64_t groups = p->attrs().get_int("groups", 1);
    if (groups < 1) return Reject("bad groups");
    int64_t out_ch = 0;
    if (*kind == ProducerKind::ConvTranspose) {
      if (w->dim() < 3 || w->size(0) % groups != 0)
        return Reject("unexpected ConvTranspose weight shape");
      out_ch = w->size(1) * groups;
    } else {
      if (w->dim() < 2) return Reject("unexpected weight shape");
      out_ch = w->size(0);
    }
    if (mean->numel() != out_ch || var->numel() != out_ch || (gamma && gamma->numel() != out_ch) ||
        (beta && beta->numel() != out_ch) || (b && b->numel() != out_ch))
      return Reject("channel counts differ");
    if (bn->attrs().has("num_features") && bn->attrs().get_int("num_features") != out_ch)
      return Reject("num_features differs from the producer's output channels");
    if (*kind == ProducerKind::Linear) {
      auto r_out = rank_of(x);
      auto r_in = p->num_inputs() ? rank_of(p->input(0)) : std::nullopt;
      bool two_d = (r_out && *r_out == 2) || (r_in && *r_in == 2);
      if (!two_d) return Reject("Linear output is not known to be 2-d");
    }
    return Candidate{bn, p, *kind, ww, wb, wmean, wvar, wgamma, wbeta};
  }

  // The check that needs the reference counts.
  Match<const Candidate*> check_unshared(const Candidate& c) {
    if (module_calls_[c.p->module()] != 1)
      return Reject("producer's module instance is called more than once");
    const std::string_view w_name = ref_of(c.p, "weight");
    const std::string_view b_name = ref_of(c.p, "bias");
    if (weight_refs_[w_name] != 1 || (!b_name.empty() && weight_refs_[b_name] != 1))
      return Reject("producer's weights are shared with another node");
    return &c;
  }

  // Everything checked: from here on the rewrite cannot fail.
  void fold(const Candidate& c) {
    Node* bn = c.bn;
    Node* p = c.p;
    const std::string_view w_name = ref_of(p, "weight");

    auto t = [](Weight* x) { return x ? &x->tensor : nullptr; };
    BnFoldInputs in{t(c.w),
                    t(c.b),
                    t(c.mean),
                    t(c.var),
                    t(c.gamma),
                    t(c.beta),
                    bn->attrs().get_float("eps", 1e-5),
                    p->attrs().get_int("groups", 1),
                    c.kind == ProducerKind::ConvTranspose};
    at::Tensor new_w, folded_b;
    fold_bn_tensors(in, new_w, folded_b);
    c.w->tensor = std::move(new_w);
    if (c.b) {
      c.b->tensor = folded_b;
    } else {
      std::string hint = w_name.size() > 7 && w_name.substr(w_name.size() - 7) == ".weight"
                             ? std::string(w_name.substr(0, w_name.size() - 7)) + ".bias"
                             : p->module() + ".bias";
      std::string nb = hint;
      for (int i = 1; g_.weights().has(nb) || pending_names_.count(nb); ++i)
        nb = hint + "_" + std::to_string(i);
      pending_names_.insert(nb);
      edits_.insert_after[std::string(w_name)].emplace_back(nb, Weight{folded_b, true});
      new_bias_refs_.emplace_back(p, nb);
    }
    p->attrs().set("bias", true);

    rw_.rewrite(rule_for(c.kind), p);
    Value* x = p->output();
    if (bn->output()->type().is_tensor() && !x->type().is_complete() &&
        bn->output()->type().is_complete())
      x->set_type(bn->output()->type());
    bn->output()->replace_all_uses_with(x);
    // The BN's weights leave the state_dict unless another call of a shared BN still reads them.
    for (const auto& kv : bn->weights())
      if (--weight_refs_[kv.second] == 0) erased_.push_back(&kv.second);
  }

  Graph& g_;
  Rewriter rw_;
  std::vector<Candidate> cands_;
  std::string key_;
  // Keys are views of names owned by the candidates' nodes, which live until the pass ends.
  // One arena for the tables: no per-entry malloc/free (this pass touches every node of graphs
  // with 100k+ nodes; see scripts/bench_passes.sh).
  std::pmr::monotonic_buffer_resource arena_;
  std::pmr::unordered_map<std::string_view, int> module_calls_{&arena_};
  std::pmr::unordered_map<std::string_view, int> weight_refs_{&arena_};
  std::pmr::unordered_set<const Node*> cand_nodes_{&arena_};  // counted from cands_
  // The weight store's edits (Note [Weight-store edits]): new biases right after their weight,
  // applied in one pass at the end.
  WeightEdits edits_;
  // Note [Erasing the folded BatchNorms' weights]
  // The BN entries leaving the store, as the BN nodes' own name strings (the nodes live until the
  // end of the pass; each name is listed once, when its last reference goes). They are erased
  // one by one before the edits are applied rather than listed in WeightEdits::erase: an erase
  // leaves a hole that the apply's compaction closes, so the order is the same, without a copy
  // and a hash set entry of each of the ~5 names per fold (590k on the 1M-node graph of
  // scripts/bench_passes.sh; issue #22). No new bias takes an erased name: it was chosen while
  // the BN entries were still in the store.
  std::vector<const std::string*> erased_;
  std::unordered_set<std::string> pending_names_;
  std::vector<std::pair<Node*, std::string>> new_bias_refs_;
};

}  // namespace

// Note [BatchNorm folding on raw data]
// One fold is a handful of per-channel multiply-adds on tensors of a few hundred elements. Written
// as ATen calls (to(kDouble), rsqrt, mul, add, to(dtype): about fifteen ops per fold) the
// dispatcher's fixed cost per call dominates: ~127 us per fold, 13 s of the 1M-node graph of
// scripts/bench_passes.sh (issue #22). The fast path below does the same arithmetic in plain loops
// over the tensors' float/double data and allocates only the two results. It is bit for bit the
// ATen formula: every step is one IEEE double operation rounded on its own, in the same order
// (t = var + eps; s = 1 / sqrt(t); s = s * gamma; nb = (b - mean) * s; nb = nb + beta;
// W' = W * s; results cast to the weight's / bias's dtype with one rounding), which is what ATen's
// CPU kernels compute element by element (scalar and vector forms agree: rsqrt is a correctly
// rounded sqrt then a division; there is no fused multiply-add in mul or add). The compiler must
// not contract `nb * s + beta` into an FMA either: the steps are separate loops, and GCC's
// -ffp-contract=fast (its default in gnu++ modes) is switched off for these functions. Tensors of
// other dtypes (half, bfloat16) or layouts take the ATen path, which stays the reference:
// tests/unit/test_passes.cpp compares the two bit for bit.
#if defined(__GNUC__) && !defined(__clang__)
#define TT_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define TT_NO_FP_CONTRACT
#endif

namespace {

int64_t bn_out_channels(const BnFoldInputs& in) {
  const at::Tensor& w = *in.w;
  return in.transpose ? w.size(1) * in.groups : w.size(0);
}

bool raw_foldable(const at::Tensor* t) {
  return !t || (t->device().is_cpu() && t->is_contiguous() && t->layout() == at::kStrided &&
                (t->scalar_type() == at::kFloat || t->scalar_type() == at::kDouble));
}

// The raw pointers come from the untyped accessors (const_data_ptr(), mutable_data_ptr()) and a
// cast: the typed templates (const_data_ptr<T>) constrain T with enable_if in a template
// parameter, which clang mangles differently from the g++ that built LibTorch, so the sanitizer
// build (clang) did not link.
// Element i of a contiguous float or double tensor, as double (exact).
inline double at_f64(const at::Tensor& t, int64_t i) {
  return t.scalar_type() == at::kDouble
             ? static_cast<const double*>(t.const_data_ptr())[i]
             : static_cast<double>(static_cast<const float*>(t.const_data_ptr())[i]);
}

// W'[i] = W[i] * s[channel of i], cast to W's dtype. W is viewed as [G, IG, OG, K] with the
// channel of element (g, i, j, k) = g*OG + j: [1, 1, out, rest] for Conv/Linear, [groups,
// in/groups, out/groups, k...] for ConvTranspose.
template <typename T>
TT_NO_FP_CONTRACT void scale_weight(const at::Tensor& w, at::Tensor& out,
                                    const std::vector<double>& s, int64_t G, int64_t IG, int64_t OG,
                                    int64_t K) {
  const T* src = static_cast<const T*>(w.const_data_ptr());
  T* dst = static_cast<T*>(out.mutable_data_ptr());
  for (int64_t g = 0; g < G; ++g)
    for (int64_t i = 0; i < IG; ++i)
      for (int64_t j = 0; j < OG; ++j) {
        const double sc = s[static_cast<size_t>(g * OG + j)];
        for (int64_t k = 0; k < K; ++k, ++src, ++dst)
          *dst = static_cast<T>(static_cast<double>(*src) * sc);
      }
}

TT_NO_FP_CONTRACT void fold_bn_raw(const BnFoldInputs& in, at::Tensor& new_w, at::Tensor& new_b) {
  const at::Tensor& w = *in.w;
  const int64_t oc = bn_out_channels(in);
  const size_t n = static_cast<size_t>(oc);
  std::vector<double> s(n), nb(n);
  for (int64_t c = 0; c < oc; ++c) {
    const double t = at_f64(*in.var, c) + in.eps;
    s[c] = 1.0 / std::sqrt(t);
  }
  if (in.gamma)
    for (int64_t c = 0; c < oc; ++c) s[c] = s[c] * at_f64(*in.gamma, c);
  for (int64_t c = 0; c < oc; ++c) {
    const double b = in.b ? at_f64(*in.b, c) : 0.0;
    nb[c] = (b - at_f64(*in.mean, c)) * s[c];
  }
  if (in.beta)
    for (int64_t c = 0; c < oc; ++c) nb[c] = nb[c] + at_f64(*in.beta, c);

  const at::ScalarType wdt = w.scalar_type();
  const at::ScalarType bdt = in.b ? in.b->scalar_type() : wdt;
  // at::empty without the dispatcher (its fixed cost is most of a small fold; issue #22).
  new_b = at::detail::empty_cpu({oc}, bdt);
  if (bdt == at::kDouble) {
    std::copy(nb.begin(), nb.end(), static_cast<double*>(new_b.mutable_data_ptr()));
  } else {
    float* dst = static_cast<float*>(new_b.mutable_data_ptr());
    for (size_t c = 0; c < n; ++c) dst[c] = static_cast<float>(nb[c]);
  }

  new_w = at::detail::empty_cpu(w.sizes(), wdt);
  if (oc == 0 || w.numel() == 0) return;
  int64_t G = 1, IG = 1, OG = oc, K = w.numel() / oc;
  if (in.transpose) {
    G = in.groups;
    IG = w.size(0) / in.groups;
    OG = w.size(1);
    K = w.numel() / (w.size(0) * w.size(1));
  }
  if (wdt == at::kDouble)
    scale_weight<double>(w, new_w, s, G, IG, OG, K);
  else
    scale_weight<float>(w, new_w, s, G, IG, OG, K);
}

// The same formula as ATen calls: the reference, and the path for other dtypes and layouts.
void fold_bn_aten(const BnFoldInputs& in, at::Tensor& new_w, at::Tensor& new_b) {
  const at::Tensor& w = *in.w;
  const int64_t groups = in.groups;
  const int64_t out_ch = bn_out_channels(in);
  auto f64 = [](const at::Tensor& t) { return t.detach().to(at::kDouble).reshape({-1}); };
  at::Tensor scale = at::rsqrt(f64(*in.var) + in.eps);
  if (in.gamma) scale = scale * f64(*in.gamma);
  at::Tensor bias64 = in.b ? f64(*in.b) : at::zeros({out_ch}, at::kDouble);
  at::Tensor b64 = (bias64 - f64(*in.mean)) * scale;
  if (in.beta) b64 = b64 + f64(*in.beta);

  at::Tensor w64 = w.detach().to(at::kDouble);
  at::Tensor w_out;
  if (in.transpose) {
    std::vector<int64_t> view{groups, w.size(0) / groups, w.size(1)};
    std::vector<int64_t> sview{groups, 1, w.size(1)};
    for (int64_t d = 2; d < w.dim(); ++d) {
      view.push_back(w.size(d));
      sview.push_back(1);
    }
    w_out = (w64.reshape(view) * scale.reshape(sview)).reshape(w.sizes());
  } else {
    std::vector<int64_t> bshape(static_cast<size_t>(w.dim()), 1);
    bshape[0] = out_ch;
    w_out = w64 * scale.reshape(bshape);
  }
  const at::ScalarType wdt = w.scalar_type();
  const at::ScalarType bdt = in.b ? in.b->scalar_type() : wdt;
  new_b = b64.to(bdt).contiguous();
  new_w = w_out.to(wdt).contiguous();
}

}  // namespace

bool fold_bn_tensors(const BnFoldInputs& in, at::Tensor& new_w, at::Tensor& new_b,
                     BnFoldMath math) {
  const bool raw = math != BnFoldMath::Aten && raw_foldable(in.w) && raw_foldable(in.b) &&
                   raw_foldable(in.mean) && raw_foldable(in.var) && raw_foldable(in.gamma) &&
                   raw_foldable(in.beta) && in.mean->numel() == bn_out_channels(in);
  if (raw)
    fold_bn_raw(in, new_w, new_b);
  else
    fold_bn_aten(in, new_w, new_b);
  return raw;
}

bool run_fold_batchnorm(Graph& g, PassContext& ctx) { return BnFolder(g, ctx).run(); }

}  // namespace tt
