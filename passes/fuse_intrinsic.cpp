// fuse-intrinsic: fuse Conv/Linear/BatchNorm + ReLU chains into the torch.ao.nn.intrinsic modules
// that eager-mode quantization turns into one quantized kernel (step 4 of --quant-prep).
//
// PTQ (default):
//   Conv{1,2,3}d + BatchNorm  -> BN folded into the conv (the fold-batchnorm pass, same math)
//   Conv{1,2,3}d (+BN) + ReLU -> nni.ConvReLU{1,2,3}d(conv, relu) with the BN folded
//   Linear (+BN1d) + ReLU     -> nni.LinearReLU(linear, relu)
//   BatchNorm{2,3}d + ReLU    -> nni.BNReLU{2,3}d(bn, relu)
// QAT (`fuse-intrinsic{qat=true}`): BN is kept for training:
//   Conv + BN (+ ReLU)        -> nni.ConvBn{1,2,3}d / nni.ConvBnReLU{1,2,3}d
//   Linear + BN1d             -> nni.LinearBn1d
//   Conv + ReLU, Linear + ReLU, BN + ReLU as for PTQ.
// ReLU6 has no fused module: Conv+BN is folded and the nn.ReLU6 stays (numerics never change).
//
// Before:
//   %c : Tensor = nn.Conv2d[...](%x) @weight=conv1.weight #module=conv1
//   %r : Tensor = nn.ReLU[inplace=true](%c) #module=relu
// After:
//   %c : Tensor = nni.ConvReLU2d[in_channels=..., ...](%x) @0.weight=conv1.0.weight #module=conv1
// (the composite keeps the first part's module path; weights are renamed to the Sequential's
// state_dict names, see Note [Composite modules] in lib/ir/quant.h)
//
// Fires only when each later part is the only user of the earlier part's output, all parts are in
// the same block, and every part's module instance is called once (unshare-modules runs first).
#include "ir/quant.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <unordered_map>
#include <unordered_set>

namespace tt {
namespace {

// "nn.Conv2d" -> "2d"; "" when the op is not a Conv{1,2,3}d.
std::string conv_dims(const Node* n) {
  for (const char* d : {"1d", "2d", "3d"})
    if (n->op() == std::string("nn.Conv") + d) return d;
  return "";
}
std::string bn_dims(const Node* n) {
  for (const char* d : {"1d", "2d", "3d"})
    if (n->op() == std::string("nn.BatchNorm") + d) return d;
  return "";
}
bool is_relu(const Node* n) {
  if (n->is("nn.ReLU")) return n->num_inputs() == 1;
  return n->module().empty() && calls_aten(n, "aten::relu") && n->num_inputs() == 1;
}

struct Chain {
  Node* head;          // conv / linear / bn (keeps its node, output and module path)
  Node* bn = nullptr;  // QAT only
  Node* relu = nullptr;
  std::string op;  // the composite op; "" while incomplete
};

class IntrinsicFuser {
 public:
  IntrinsicFuser(Graph& g, PassContext& ctx, bool qat) : g_(g), rw_(ctx), qat_(qat) {}

  bool run() {
    walk_pre(g_.block(), [&](Node* n) {
      if (!n->module().empty()) ++calls_[n->module()];
      return true;
    });
    walk_pre(g_.block(), [&](Node* n) {
      if (qat_ && !bn_dims(n).empty())
        rw_.run("fuse", n, check_conv_bn(n), [&](Chain& c) {
          chains_.push_back(std::move(c));
          tail_[n] = chains_.size() - 1;
        });
      if (is_relu(n))
        rw_.run("fuse", n, check_relu(n), [&](Link& l) {
          if (l.chain == kNewChain) return chains_.push_back(std::move(l.c));
          chains_[l.chain].relu = n;
          chains_[l.chain].op = l.c.op;
        });
      return true;
    });
    if (chains_.empty()) return false;
    std::unordered_map<std::string, std::string> renames;
    for (Chain& c : chains_) apply(c, renames);
    rename_weights(g_, renames);
    return true;
  }

 private:
  // What a ReLU does: start a chain (`c`), or end the QAT Conv+BN chain `chain` as `c.op`.
  static constexpr size_t kNewChain = static_cast<size_t>(-1);
  struct Link {
    size_t chain = kNewChain;
    Chain c;
  };

  // Why `next` cannot join the chain ending at producer `p` (nullptr: it can): same block, sole
  // user, single call.
  const char* unjoinable(const Node* p, const Node* next) {
    if (p->owning_block() != next->owning_block()) return "producer is in another block";
    if (p->num_outputs() != 1 || !has_one_use(p->output()))
      return "producer's output has other uses";
    if (p->module().empty() || calls_[p->module()] != 1)
      return "producer's module instance is called more than once";
    if (!next->module().empty() && calls_[next->module()] != 1)
      return "module instance is called more than once";
    return nullptr;
  }

  static bool bn_eval_with_stats(const Node* bn) {
    return !bn->attrs().get_bool("training", false) &&
           bn->attrs().get_bool("track_running_stats", true) &&
           !bn->weight("running_mean").empty() && !bn->weight("running_var").empty() &&
           bn->num_inputs() == 1 && bn->num_outputs() == 1;
  }

  Match<Chain> check_conv_bn(Node* bn) {
    if (!bn_eval_with_stats(bn)) return Reject("BatchNorm is not eval-mode with running stats");
    Node* p = bn->input(0)->node();
    std::string d = bn_dims(bn);
    std::string op;
    if (conv_dims(p) == d)
      op = "nni.ConvBn" + d;
    else if (p->is("nn.Linear") && d == "1d")
      op = "nni.LinearBn1d";
    else
      return Reject("input is not produced by a matching Conv/Linear module");
    if (const char* why = unjoinable(p, bn)) return Reject(why);
    return Chain{p, bn, nullptr, op};
  }

  Match<Link> check_relu(Node* relu) {
    Node* p = relu->input(0)->node();
    auto t = tail_.find(p);
    if (t != tail_.end()) {  // Conv+BN chain of QAT
      const Chain& c = chains_[t->second];
      if (c.op.empty() || c.op.find("Linear") != std::string::npos) return {};
      if (const char* why = unjoinable(p, relu)) return Reject(why);
      return Link{t->second,
                  Chain{nullptr, nullptr, nullptr, "nni.ConvBnReLU" + conv_dims(c.head)}};
    }
    std::string op;
    if (!conv_dims(p).empty())
      op = "nni.ConvReLU" + conv_dims(p);
    else if (p->is("nn.Linear"))
      op = "nni.LinearReLU";
    else if (bn_dims(p) == "2d" || bn_dims(p) == "3d") {
      if (!bn_eval_with_stats(p)) return Reject("BatchNorm is not eval-mode with running stats");
      op = "nni.BNReLU" + bn_dims(p);
    } else {
      return Reject("input is not produced by a Conv/Linear/BatchNorm module");
    }
    if (const char* why = unjoinable(p, relu)) return Reject(why);
    return Link{kNewChain, Chain{p, nullptr, relu, op}};
  }

  void apply(Chain& c, std::unordered_map<std::string, std::string>& renames) {
    Node* head = c.head;
    const std::string path = head->module();
    // Weight keys become "<part>.<key>"; names "<path>.<part>.<key>".
    auto rekey = [&](Node* from, size_t part) {
      auto refs = from->weights();
      for (const auto& kv : refs) {
        if (from == head) head->erase_weight(kv.first);
        std::string key = composite_weight_key(part, kv.first);
        std::string name = path + "." + key;
        renames[kv.second] = name;
        head->set_weight(key, kv.second);  // renamed with every other reference at the end
      }
    };
    rekey(head, 0);
    size_t part = 1;
    Value* out = head->output();
    auto absorb = [&](Node* n, const char* prefix) {
      if (prefix)
        for (const auto& [name, value] : n->attrs().items())
          head->attrs().set(prefix + name, value);
      if (n->output()->type().is_complete() && !out->type().is_complete())
        out->set_type(n->output()->type());
      n->output()->replace_all_uses_with(out);
      n->destroy();
      ++part;
    };
    const char* rule = c.op.find("BNReLU") != std::string::npos ? "bn+relu"
                       : c.op.find("Linear") != std::string::npos
                           ? (c.bn ? "linear+bn" : "linear+relu")
                       : c.bn ? (c.relu ? "conv+bn+relu" : "conv+bn")
                              : "conv+relu";
    rw_.rewrite(rule, head);
    if (c.bn) {
      rekey(c.bn, part);
      absorb(c.bn, "bn_");
    }
    if (c.relu) absorb(c.relu, nullptr);
    head->set_op(c.op);
  }

  Graph& g_;
  Rewriter rw_;
  bool qat_;
  std::unordered_map<std::string, int> calls_;
  std::vector<Chain> chains_;
  std::unordered_map<const Node*, size_t> tail_;  // QAT: BN node -> its Conv+BN chain
};

}  // namespace

bool run_fuse_intrinsic(Graph& g, PassContext& ctx) {
  bool qat = ctx.option_bool("qat", false);
  bool changed = false;
  // PTQ folds BN into the conv/linear first, with the very same rewrite as --fuse.
  if (!qat) changed = run_fold_batchnorm(g, ctx);
  return IntrinsicFuser(g, ctx, qat).run() || changed;
}

}  // namespace tt
