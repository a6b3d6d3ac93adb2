// The rewrite toolkit passes are written with (Note [Rewrite toolkit]): the node-walk drivers,
// check-then-apply patterns (Match, Reject, Rewriter) and the log they report rewrites and
// rejections to. The weight-store edits are on WeightStore (lib/ir/ir.h, Note [Weight-store
// edits]).
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>
#include <utility>

namespace tt {

// Note [Rewrite toolkit]
// - Walks. walk_pre(b, f) calls f on every node of `b` in program order, depth-first into the
//   nested blocks of prim.If / prim.Loop (pre-order), descending only when f returns true.
//   walk(b, pre, post) also calls post(n) after n's nested blocks, when pre(n) returned true.
//   The next node is read before the visit, so the visited node (and earlier ones) may be
//   destroyed or replaced; the visit must then return false. Nodes inserted after the visited
//   one are not visited. any_node(b, pred) asks whether some node, nested ones included, has a
//   property (it stops at the first).
// - Patterns. A pattern is a check and an apply step. The check looks at the graph without
//   changing it and returns a Match<T>: `{}` when the node is not the pattern's (nothing is
//   recorded), `Reject("why")` when it is but a condition fails, or the T the apply step needs.
//   Rewriter::run(rule, n, match, apply) records a rejection and changes nothing, or calls
//   apply(T&) on a match: whatever the apply step does, the check passed first, so a "no"
//   leaves the graph as it was.
// - Rejections go through one helper, Rewriter::reject(rule, n, why), which records them with
//   the RewriteLog and returns the Reject (a "no match" for any Match<T>). A check that wants
//   to say why twice for one node (two candidate operands) calls it and goes on.
// - Rewrites are recorded with Rewriter::rewrite (the report lists them, in order).

// ---------------------------------------------------------------------------------------------
// walks

template <typename Pre, typename Post>
void walk(Block* b, Pre&& pre, Post&& post) {
  for (Node* n = b->front(); n;) {
    Node* nx = n->next();
    if (pre(n)) {
      for (const auto& sub : n->blocks()) walk(sub.get(), pre, post);
      post(n);
    }
    n = nx;
  }
}

template <typename F>
void walk_pre(Block* b, F&& f) {
  walk(b, f, [](Node*) {});
}

template <typename P>
bool any_node(const Block* b, P&& pred) {
  for (Node* n = b->front(); n; n = n->next()) {
    if (pred(n)) return true;
    for (const auto& sub : n->blocks())
      if (any_node(sub.get(), pred)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// patterns

// Where rewrites and rejections go (PassContext: the report's rewrite log; rejections are
// logged at trace level).
class RewriteLog {
 public:
  virtual ~RewriteLog() = default;
  // One rewrite at node `n` (the node being replaced, or the new one).
  virtual void rewrite(const char* rule, const Node* n) = 0;
  // Why `rule` did not apply at `n`.
  virtual void reject(const char* rule, const Node* n, const char* why) = 0;
};

// Why a pattern's check said no: a literal, or a text made for the occasion.
class Reject {
 public:
  Reject(const char* why) : why_(why) {}  // NOLINT: `return Reject("...")` or a plain literal
  explicit Reject(std::string why) : text_(std::move(why)) {}
  const char* why() const { return why_ ? why_ : text_.c_str(); }

 private:
  const char* why_ = nullptr;
  std::string text_;
};

// What a pattern's check found: nothing (default), a rejection, or a match holding T.
template <typename T>
class Match {
 public:
  Match() = default;
  Match(T v) : value_(std::move(v)) {}  // NOLINT: `return plan;`
  Match(Reject r) : reject_(std::move(r)) {}
  bool matched() const { return value_.has_value(); }
  bool rejected() const { return reject_.has_value(); }
  T& operator*() { return *value_; }
  T* operator->() { return &*value_; }
  const char* why() const { return reject_ ? reject_->why() : nullptr; }

 private:
  std::optional<T> value_;
  std::optional<Reject> reject_;
};

// Runs checked patterns and records what happened (Note [Rewrite toolkit]).
class Rewriter {
 public:
  explicit Rewriter(RewriteLog& log) : log_(log) {}

  // The one rejection helper: records why `rule` did not apply at `n`; returns the Reject.
  Reject reject(const char* rule, const Node* n, Reject why) {
    log_.reject(rule, n, why.why());
    return why;
  }
  void rewrite(const char* rule, const Node* n) { log_.rewrite(rule, n); }

  // A rejection in `m` is recorded as `rule` at `n` and nothing changes; a match runs
  // apply(value). Returns whether apply ran.
  template <typename T, typename Apply>
  bool run(const char* rule, const Node* n, Match<T> m, Apply&& apply) {
    if (m.rejected()) log_.reject(rule, n, m.why());
    if (!m.matched()) return false;
    apply(*m);
    return true;
  }

 private:
  RewriteLog& log_;
};

}  // namespace tt
