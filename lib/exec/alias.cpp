// May-alias and in-place-write facts from the ATen schemas (see alias.h, Note [In-place writes]).
#include "exec/alias.h"

#include "ir/op_table.h"

#include <algorithm>
#include <ATen/core/dispatch/Dispatcher.h>

#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace tt {
namespace {

struct AtenName {
  std::string base;      // "aten::add_"
  std::string overload;  // "" = default, "*" = every overload
};

AtenName split(const std::string& q) {
  size_t ns = q.find("::");
  size_t dot = q.find('.', ns == std::string::npos ? 0 : ns + 2);
  if (dot == std::string::npos) return {q, "*"};
  std::string ov = q.substr(dot + 1);
  return {q.substr(0, dot), ov == "default" ? "" : ov};
}

std::string short_name(const std::string& base) {
  size_t p = base.find("::");
  return p == std::string::npos ? base : base.substr(p + 2);
}

std::vector<c10::FunctionSchema> schemas_of(const AtenName& n) {
  std::vector<c10::FunctionSchema> out;
  auto& d = c10::Dispatcher::singleton();
  if (n.overload != "*") {
    if (auto h = d.findSchema({n.base, n.overload})) out.push_back(h->schema());
    return out;
  }
  // A name without overload never runs an out= overload (the interpreter and the emitter pick
  // among the others), so those do not count; in-place names keep theirs.
  bool inplace = is_inplace_name(short_name(n.base));
  for (const auto& on : d.getAllOpNames())
    if (on.name == n.base)
      if (auto h = d.findSchema(on))
        if (inplace || !h->schema().is_mutable()) out.push_back(h->schema());
  return out;
}

// Indices of the arguments of an ATen op whose memory a result may share: per schema, the
// arguments in an alias set some return is in; every argument for the composite ops above.
// nullopt for an op the dispatcher does not know.
std::optional<std::vector<size_t>> aten_aliased_args(const std::string& qualified) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::optional<std::vector<size_t>>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(qualified);
    if (it != cache.end()) return it->second;
  }
  AtenName n = split(qualified);
  auto schemas = schemas_of(n);
  std::optional<std::vector<size_t>> r;
  if (!schemas.empty()) {
    std::set<size_t> idx;
    bool all = aten_has(short_name(n.base), kReturnsInputSometimes);
    for (const auto& s : schemas) {
      // Alias sets of the results, including those of list elements (chunk: Tensor(a)[]).
      std::set<c10::Symbol> sets;
      std::function<void(const c10::AliasInfo&, std::set<c10::Symbol>&)> collect =
          [&](const c10::AliasInfo& ai, std::set<c10::Symbol>& into) {
            for (const auto& a : ai.beforeSets()) into.insert(a);
            for (const auto& a : ai.afterSets()) into.insert(a);
            for (const auto& c : ai.containedTypes()) collect(c, into);
          };
      for (const auto& ret : s.returns())
        if (ret.alias_info()) collect(*ret.alias_info(), sets);
      bool wildcard = sets.count(c10::AliasInfo::wildcardSet()) != 0;
      for (size_t i = 0; i < s.arguments().size(); ++i) {
        if (all && s.arguments()[i].type()->kind() != c10::TypeKind::IntType) idx.insert(i);
        const auto* ai = s.arguments()[i].alias_info();
        if (!ai) continue;
        std::set<c10::Symbol> arg_sets;
        collect(*ai, arg_sets);
        for (const auto& a : arg_sets)
          if (wildcard || sets.count(a) || a == c10::AliasInfo::wildcardSet()) idx.insert(i);
      }
    }
    r = std::vector<size_t>(idx.begin(), idx.end());
  }
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(qualified, r);
  return r;
}

std::vector<size_t> all_inputs(const Node& n) {
  std::vector<size_t> out(n.num_inputs());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

std::vector<size_t> aten_aliased_inputs(const std::vector<std::string>& names, const Node& n) {
  std::set<size_t> idx;
  for (const auto& q : names) {
    auto r = aten_aliased_args(q);
    if (!r) return all_inputs(n);  // unknown: assume the worst
    for (size_t i : *r)
      if (i < n.num_inputs()) idx.insert(i);
  }
  return {idx.begin(), idx.end()};
}

}  // namespace

bool aten_may_return_alias(const std::string& qualified) {
  auto r = aten_aliased_args(qualified);
  return !r || !r->empty();
}

std::vector<size_t> aliased_inputs(const Node& n) {
  const std::string& op = n.op();
  if (n.num_inputs() == 0) return {};
  if (op == "prim.NumToTensor" || op == "prim.RaiseException" || op == "prim.Print") return {};
  if (op.rfind("prim.", 0) == 0) return all_inputs(n);  // containers, unpacking, control flow
  // A qualified op: ATen's, or a custom library's ("torchvision::nms"), by its schema.
  if (op.find("::") != std::string::npos) return aten_aliased_inputs({op}, n);
  if (op.rfind("FloatFunctional.", 0) == 0) return {};
  const OpInfo* info = n.info();
  if (!n.module().empty() || (info && info->kind == OpKind::Module) || op.rfind("nn.", 0) == 0) {
    if (op_has(n, kReturnsInput) || n.attrs().get_bool("inplace", false)) return {0};
    return {};
  }
  // A list item, a list copy or a list slice holds the same tensors.
  if (op_has(n, kSharesInputItems)) return {0};
  if (info && !info->aten.empty()) return aten_aliased_inputs(info->aten, n);
  // Python builtins on numbers and strings (int, len, operator.add, str.format, math.floor)
  // make new objects.
  if (info && info->kind == OpKind::Function) return {};
  if (std::string base = spelled_aten_base(op); !base.empty())
    return aten_aliased_inputs({base}, n);
  return all_inputs(n);
}

bool may_return_alias(const Node& n) { return !aliased_inputs(n).empty(); }

std::vector<size_t> written_inputs(const Node& n) {
  const std::string& op = n.op();
  if (n.num_inputs() == 0) return {};
  if (op_has(n, kWritesContainer)) return {0};  // Note [Container mutation]
  if (op.rfind("Tensor.", 0) == 0)
    return is_inplace_name(op.substr(7)) ? std::vector<size_t>{0} : std::vector<size_t>{};
  if (op.find("::") == std::string::npos) return {};
  AtenName a = split(op);
  if (is_inplace_name(short_name(a.base))) return {0};
  if (a.overload == "*") return {};
  std::vector<size_t> out;
  for (const auto& s : schemas_of(a)) {
    const auto& args = s.arguments();
    for (size_t i = 0; i < args.size() && i < n.num_inputs(); ++i)
      if (args[i].alias_info() && args[i].alias_info()->isWrite()) out.push_back(i);
  }
  return out;
}

bool is_inplace_name(const std::string& s) {
  if (s.size() < 2 || s.back() != '_') return false;
  return !(s.rfind("__", 0) == 0 && s.size() >= 4 && s.compare(s.size() - 2, 2, "__") == 0);
}

bool is_metadata_inplace(const std::string& aten_base) {
  return aten_base_has(aten_base, kMetadataInplace);
}

MutatedMemory mutated_memory(const Graph& g) {
  // Most graphs write no memory at all: then nothing is mutated and the alias edges of every node
  // (hash maps of vectors, a malloc or more per node) need not be built. On the 1M-node graphs of
  // scripts/bench_passes.sh that was seconds per pass that asks (issue #22).
  const std::vector<Node*> nodes = g.all_nodes();
  if (std::none_of(nodes.begin(), nodes.end(),
                   [](const Node* n) { return !written_inputs(*n).empty(); }))
    return {};
  // Edges from a value to the values that may be views/aliases made from it (fwd) and back
  // (bwd), kept as adjacency arrays indexed by Value::serial (counted, then filled): no hash map
  // of vectors (a malloc or more per value: half a second on a 190k-node scripted model) and no
  // sort of the edges (issue #22).
  using Edge = std::pair<const Value*, const Value*>;  // from -> to (fwd)
  std::vector<Edge> edges;
  auto edge = [&](const Value* from, const Value* to) { edges.emplace_back(from, to); };
  std::vector<const Value*> written;
  for (const Node* n : nodes) {
    for (size_t i : written_inputs(*n)) written.push_back(n->input(i));
    // What a container write stores (l.append(x), d[k] = v, l.extend(m)) is then held by the
    // container: a write through the container reaches it, and a write into it reaches the
    // container's readers (Note [Container mutation]).
    if (op_has(*n, kWritesContainer))
      for (size_t i = 1; i < n->num_inputs(); ++i) {
        edge(n->input(i), n->input(0));
        edge(n->input(0), n->input(i));
      }
    for (size_t i : aliased_inputs(*n))
      for (const Value* o : n->outputs()) edge(n->input(i), o);
    for (const auto& b : n->blocks()) {
      // Block results become the node's results; loop-carried values flow into the body's
      // parameters, and from its results into the next iteration's.
      for (const Value* bo : b->outputs()) {
        for (const Value* o : n->outputs()) edge(bo, o);
        for (const Value* p : b->inputs()) edge(bo, p);
      }
      for (const Value* in : n->inputs())
        for (const Value* p : b->inputs()) edge(in, p);
    }
  }
  const size_t serials = g.next_value_serial();
  // Adjacency of each value, by serial: its neighbours are next[start[s] .. start[s + 1]).
  struct Adjacency {
    std::vector<size_t> start;
    std::vector<const Value*> next;
  };
  auto adjacency = [&](bool backward) {
    Adjacency a;
    a.start.assign(serials + 1, 0);
    for (const Edge& e : edges) ++a.start[(backward ? e.second : e.first)->serial() + 1];
    for (size_t s = 0; s < serials; ++s) a.start[s + 1] += a.start[s];
    std::vector<size_t> fill(a.start.begin(), a.start.end() - 1);
    a.next.resize(edges.size());
    for (const Edge& e : edges) {
      const Value* from = backward ? e.second : e.first;
      a.next[fill[from->serial()]++] = backward ? e.first : e.second;
    }
    return a;
  };
  // Marks everything reachable from `todo` in `seen`; returns what it marked.
  auto closure = [&](std::vector<const Value*> todo, const Adjacency& a) {
    std::vector<bool> seen(serials, false);
    std::vector<const Value*> reached;
    for (const Value* v : todo)
      if (!seen[v->serial()]) seen[v->serial()] = true, reached.push_back(v);
    todo = reached;
    while (!todo.empty()) {
      const Value* v = todo.back();
      todo.pop_back();
      for (size_t k = a.start[v->serial()]; k < a.start[v->serial() + 1]; ++k) {
        const Value* w = a.next[k];
        if (!seen[w->serial()]) {
          seen[w->serial()] = true;
          reached.push_back(w);
          todo.push_back(w);
        }
      }
    }
    return std::make_pair(std::move(seen), std::move(reached));
  };
  // Everything the written memory may have been made from, then everything made from that.
  std::vector<const Value*> roots = closure(written, adjacency(true)).second;
  auto out = closure(std::move(roots), adjacency(false));
  return MutatedMemory(&g, std::move(out.first), out.second.size());
}

}  // namespace tt
