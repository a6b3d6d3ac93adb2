// The torch.export module builder (builder.h): the module objects, the order of each call's nodes
// and sub-calls, call results and method names.
#include "loaders/export/builder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <queue>

namespace tt::pt2 {

std::string Builder::sanitize_component(const std::string& s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

// "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d": the tracer's naming, one class
// per instance (the lifter strips "__torch__." and the mangle).
std::string Builder::class_name(const std::string& cls) {
  std::vector<std::string> comps;
  size_t start = 0;
  while (start <= cls.size()) {
    size_t dot = cls.find('.', start);
    comps.push_back(sanitize_component(
        cls.substr(start, dot == std::string::npos ? std::string::npos : dot - start)));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::string q = "__torch__";
  for (size_t i = 0; i + 1 < comps.size(); ++i) q += "." + comps[i];
  return q + ".___torch_mangle_" + std::to_string(mangle_++) + "." + comps.back();
}

Builder::Mod& Builder::module_at(const std::string& path) {
  auto it = mods_.find(path);
  if (it != mods_.end()) return it->second;
  if (!path.empty()) {
    auto dot = path.rfind('.');
    std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
    module_at(parent).children.push_back(dot == std::string::npos ? path : path.substr(dot + 1));
  }
  Mod& m = mods_[path];
  return m;
}

void Builder::build_modules() {
  module_at("");
  // Paths in state_dict order first (the order of the module's own registration), then the
  // called modules that own no weights.
  for (const auto& [name, w] : weight_order()) {
    auto dot = w->target.rfind('.');
    module_at(dot == std::string::npos ? "" : w->target.substr(0, dot));
  }
  for (const Call& c : calls_) {
    if (c.path.empty()) continue;
    Mod& m = module_at(c.path);
    if (m.cls.empty()) m.cls = c.cls;
  }
  mods_[""].cls = root_->cls;
  cu_ = std::make_shared<jit::CompilationUnit>();
  for (auto& [path, m] : mods_) {
    std::string cls = m.cls.empty() ? "torch.nn.modules.module.Module" : m.cls;
    m.module = jit::Module(c10::QualifiedName(class_name(cls)), cu_, /*shouldMangle=*/false);
    m.module.register_attribute("training", c10::BoolType::get(), false);
  }
  for (const auto& [name, w] : weight_order()) {
    auto dot = w->target.rfind('.');
    std::string owner = dot == std::string::npos ? "" : w->target.substr(0, dot);
    std::string attr = dot == std::string::npos ? w->target : w->target.substr(dot + 1);
    jit::Module& m = mods_.at(owner).module;
    if (m.hasattr(attr)) continue;  // one tensor under two names (tied weights): the first
    at::Tensor t = w->value.detach();
    if (w->what == WeightSpec::Parameter)
      m.register_parameter(attr, t, /*is_buffer=*/false);
    else if (w->what == WeightSpec::Buffer)
      m.register_buffer(attr, t);
    else
      m.register_attribute(attr, c10::TensorType::get(), t);
  }
  // Children after the tensors, as nn.Module's state_dict orders them.
  std::function<void(const std::string&)> attach = [&](const std::string& path) {
    Mod& m = mods_.at(path);
    for (const auto& child : m.children) {
      std::string cp = path.empty() ? child : path + "." + child;
      attach(cp);
      if (!m.module.hasattr(child)) m.module.register_module(child, mods_.at(cp).module);
    }
  };
  attach("");
}

std::map<std::string, ModuleInfo> Builder::module_table() const {
  std::map<std::string, ModuleInfo> out;
  for (const Call& c : calls_)
    if (!c.cls.empty()) out.emplace(c.path, ModuleInfo{c.cls, {}});  // the first call's class
  return out;
}

std::vector<std::pair<std::string, const Builder::WeightSpec*>> Builder::weight_order() const {
  std::vector<std::pair<std::string, const WeightSpec*>> out;
  for (const json& in : graph_->at("inputs")) {
    if (!in.contains("as_tensor")) continue;
    std::string name = in["as_tensor"].at("name").get<std::string>();
    auto it = weights_.find(name);
    if (it != weights_.end()) out.emplace_back(name, &it->second);
  }
  return out;
}

// The item of `c`'s level that node i belongs to: the node itself, a sub-call of c, or none
// (outside c).
std::optional<std::pair<int, Call*>> Builder::item_of(const Call* c, int i) const {
  Call* k = node_call_[i];
  if (k == c) return std::make_pair(i, static_cast<Call*>(nullptr));
  for (; k && k->parent != c; k = k->parent) {
  }
  if (!k) return std::nullopt;
  return std::make_pair(-1, k);
}

void Builder::subtree_nodes(const Call* c, std::vector<int>& out) const {
  out.insert(out.end(), c->nodes.begin(), c->nodes.end());
  for (const Call* k : c->children) subtree_nodes(k, out);
}

void Builder::dissolve(Call* c, Call* child) {
  for (int i : child->nodes) node_call_[i] = c;
  c->nodes.insert(c->nodes.end(), child->nodes.begin(), child->nodes.end());
  std::sort(c->nodes.begin(), c->nodes.end());
  child->nodes.clear();
  auto pos = std::find(c->children.begin(), c->children.end(), child);
  std::vector<Call*> grand = child->children;
  for (Call* g : grand) g->parent = c;
  pos = c->children.erase(pos);
  c->children.insert(pos, grand.begin(), grand.end());
  child->children.clear();
  spdlog::debug("export: the call of {} ({}) interleaves with its caller's nodes; inlined into {}",
                child->path, child->key, c->path.empty() ? "the root" : c->path);
}

// Whether calling sub-call k as one unit could move an in-place write across a read: some node
// of c's level lies between k's first and last node, and it writes in place, or it reads tensor
// data while k writes in place in that stretch. (Size queries and scalar arithmetic, which
// export places anywhere, read no data.)
bool Builder::reorder_hazard(const Call* c, const Call* k, std::vector<int>& sub) const {
  std::sort(sub.begin(), sub.end());
  std::set<int> inside(sub.begin(), sub.end());
  std::vector<int> all;
  subtree_nodes(c, all);
  bool outside_writes = false, outside_reads = false;
  for (int o : all) {
    if (o <= sub.front() || o >= sub.back() || inside.count(o)) continue;
    std::string t = nodes_[o]->at("target").get<std::string>();
    outside_writes = outside_writes || is_inplace_target(t);
    outside_reads = outside_reads || !is_scalar_node(o);
  }
  if (outside_writes) return true;
  if (!outside_reads) return false;
  for (int i : sub)
    if (is_inplace_target(nodes_[i]->at("target").get<std::string>())) return true;
  return false;
}

void Builder::schedule(Call* c) {
  for (;;) {
    // Items: own nodes and sub-calls, each with the smallest node index it holds.
    std::vector<std::pair<int, Call*>> items;
    std::vector<int> first;
    std::map<std::pair<int, Call*>, size_t> index;
    for (int i : c->nodes) {
      index[{i, nullptr}] = items.size();
      items.push_back({i, nullptr});
      first.push_back(i);
    }
    Call* hazard = nullptr;
    for (Call* k : c->children) {
      std::vector<int> sub;
      subtree_nodes(k, sub);
      if (sub.empty()) continue;
      index[{-1, k}] = items.size();
      items.push_back({-1, k});
      first.push_back(*std::min_element(sub.begin(), sub.end()));
      if (!hazard && reorder_hazard(c, k, sub)) hazard = k;
    }
    if (hazard) {
      dissolve(c, hazard);
      continue;
    }
    std::vector<std::set<size_t>> succ(items.size());
    std::vector<int> indeg(items.size(), 0);
    std::vector<int> all;
    subtree_nodes(c, all);
    for (int m : all) {
      size_t to = index.at(*item_of(c, m));
      std::vector<std::string> uses;
      for (const json& in : nodes_[m]->at("inputs")) collect_uses(in.at("arg"), uses);
      for (const auto& u : uses) {
        auto p = producer_.find(u);
        if (p == producer_.end() || dropped_[p->second]) continue;
        auto from_item = item_of(c, p->second);
        if (!from_item) continue;
        size_t from = index.at(*from_item);
        if (from != to && succ[from].insert(to).second) ++indeg[to];
      }
    }
    using Entry = std::pair<int, size_t>;  // (first node index, item)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    for (size_t k = 0; k < items.size(); ++k)
      if (indeg[k] == 0) ready.push({first[k], k});
    std::vector<std::pair<int, Call*>> order;
    while (!ready.empty()) {
      size_t k = ready.top().second;
      ready.pop();
      order.push_back(items[k]);
      for (size_t s : succ[k])
        if (--indeg[s] == 0) ready.push({first[s], s});
    }
    if (order.size() == items.size()) {
      c->items = std::move(order);
      break;
    }
    // A cycle through sub-calls: dissolve the earliest one left and try again.
    Call* victim = nullptr;
    int best = INT_MAX;
    for (size_t k = 0; k < items.size(); ++k)
      if (indeg[k] > 0 && items[k].second && first[k] < best) {
        best = first[k];
        victim = items[k].second;
      }
    TT_ASSERT(victim, "a dependency cycle between the nodes of one call");
    dissolve(c, victim);
  }
  for (auto& it : c->items)
    if (it.second) schedule(it.second);
}

void Builder::find_outputs() {
  std::map<Call*, std::set<std::pair<int, std::string>>> outs;
  auto mark = [&](const std::string& v, int producer, Call* user) {
    for (Call* c = node_call_[producer]; c && !contains(c, user); c = c->parent)
      outs[c].insert({producer, v});
  };
  for (const auto& [v, p] : producer_) {
    if (dropped_[p]) continue;
    if (graph_outputs().count(v)) mark(v, p, root_);
    auto it = users_.find(v);
    if (it == users_.end()) continue;
    for (int u : it->second)
      if (!dropped_[u]) mark(v, p, node_call_[u]);
  }
  for (auto& [c, s] : outs)
    for (const auto& e : s) c->outputs.push_back(e.second);
}

void Builder::name_methods(Call* c, std::map<std::string, int>& count) {
  if (c != root_) {
    int n = count[c->path]++;
    c->method = n == 0 ? "forward" : "forward" + std::to_string(n);
  } else {
    c->method = "forward";
  }
  for (auto& it : c->items)
    if (it.second) name_methods(it.second, count);
}

}  // namespace tt::pt2
