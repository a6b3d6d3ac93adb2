// The Python emitter's hierarchical layout: one class per (original module class, structure),
// containers built as containers, each composite module's nodes outlined into its own forward
// (Note [Classes of the generated module]). --flat keeps the single-class layout of python.cpp.
#include "emitters/python/emitter.h"

#include "passes/pass_util.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <queue>
#include <spdlog/spdlog.h>

namespace tt::pyemit {

// Note [Classes of the generated module]
// The default layout mirrors the model's own source (issue #14):
// - Every composite module instance (a module path that is not a module op: the root, custom
//   modules, containers) is a Region. Its nodes are those whose #scope is its path or below, in
//   the graph's top block (nodes in if/loop bodies go with the if/loop node).
// - A Region is *outlined* (gets its own forward, called as `self.layer1(x)` by its parent) only
//   when that is exactly what the flat code computes: its nodes are not also nested in blocks of
//   nodes outside it; every module it calls and weight it reads lies below its path; and it can be
//   emitted in one place: the other nodes between its first and last node are pure and neither
//   feed it while depending on it, and when it has side effects nothing else lies in between.
//   A Region that cannot be outlined is written inline in its parent's forward, which reaches its
//   modules through it (`self.layer1[0].conv1(x)`). Outlining never changes what is computed: the
//   same statements run in the same dependency order, only inside another function.
// - Instances share a class when they have the same original class, the same forward (compared
//   as text written with canonical names, so `conv1_7` and `conv1_3` compare equal) and the same
//   __init__ up to the leaf values of its constructor calls (channels, strides, sizes). Leaves that
//   differ between instances become constructor parameters (leaves with identical values in every
//   instance share one); a leaf's default makes its parameter a keyword with that default. The
//   class is named after the original class; a numbered suffix (BasicBlock2) marks another
//   structure of the same class. Structural variants (a block with a `downsample` and one
//   without) are their own classes: every class's forward is then straight-line code that says
//   exactly what its instances compute.
// - Containers: torch.nn.Sequential, ModuleList and ModuleDict (by class name) are built as such;
//   children with numeric names are reached as `self.features[3]` (gaps, left by modules a pass
//   removed, are filled with nn.Identity(), which has no weights, so indexing stays right). An
//   nn.Sequential is called as a whole only when its forward is exactly its children in order.
//   Other modules whose children all have numeric names derive from nn.Sequential (torchvision's
//   Conv2dNormActivation is one) so that they can be indexed too. Names that are no identifier or
//   that nn.Module already uses go through add_module / get_submodule.
// - state_dict keys and order stay the original's: a module's own parameters and buffers come
//   before its children, as in the flat layout.

namespace {

// Attribute names nn.Module (or nn.Sequential) already has: a child of that name must go through
// add_module / get_submodule, since `self.forward` finds the method.
bool module_attribute(const std::string& s) {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (const std::string& w :
         split("forward training train eval to cpu cuda type float double half bfloat16 apply "
               "parameters named_parameters buffers named_buffers children named_children "
               "modules named_modules state_dict load_state_dict zero_grad register_buffer "
               "register_parameter add_module get_submodule get_parameter get_buffer "
               "requires_grad_ extra_repr append extend insert pop dump_patches call_super_init "
               "T_destination",
               ' '))
      out.insert(w);
    return out;
  }();
  return names.count(s) != 0;
}

// Thrown when the hierarchical layout cannot be built: run() falls back to the flat layout.
struct NoHierarchy {
  std::string why;
};

}  // namespace

bool under(const std::string& path, const std::string& base) {
  return base.empty() ? !path.empty() : path.rfind(base + ".", 0) == 0;
}
bool under_or_at(const std::string& path, const std::string& base) {
  return path == base || under(path, base);
}
std::string parent_path(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}
std::string relative(const std::string& path, const std::string& base) {
  return base.empty() ? path : path.substr(base.size() + 1);
}

const Node* top_of(const Node* n, const Block* top) {
  while (n->owning_block() && n->owning_block() != top && n->owning_block()->owning_node())
    n = n->owning_block()->owning_node();
  return n;
}

const std::vector<PyEmitter::Read>& PyEmitter::reads(const Node* t) const {
  auto [it, fresh] = reads_.try_emplace(t);
  if (!fresh) return it->second;
  std::unordered_set<const Value*> seen;
  const Block* top = g_.block();
  for_each_deep(t, [&](const Node* m) {
    for (const Value* v : m->inputs()) {
      const Node* p = top_of(v->node(), top);
      if (p != t && seen.insert(v).second) it->second.push_back({v, p});
    }
  });
  return it->second;
}

void for_each_deep(const Node* n, const std::function<void(const Node*)>& f) {
  f(n);
  for (const auto& b : n->blocks())
    for (const Node* m = b->front(); m; m = m->next()) for_each_deep(m, f);
  for (const auto& b : n->blocks()) f(b->return_node());
}

bool index_name(const std::string& s) { return all_digits(s) && (s == "0" || s[0] != '0'); }
bool plain_attr(const std::string& s) { return is_identifier(s) && !module_attribute(s); }

// ---------------------------------------------------------------------------------------------
// regions

Region* PyEmitter::region_at(const std::string& path) const {
  auto it = regions_by_path_.find(path);
  return it == regions_by_path_.end() ? nullptr : it->second;
}

Region* PyEmitter::owner_of(const Node* n) const {
  std::string s = n->scope();
  while (true) {
    if (Region* r = region_at(s)) return r;
    if (s.empty()) return region_at("");
    s = parent_path(s);
  }
}

void PyEmitter::build_regions() {
  // Entries for scopes that own no weights and call no module op (a custom activation).
  std::string last;
  for (const Node* n : graph_nodes()) {
    if (!n->module().empty()) last = n->module();
    if (n->scope().empty() || n->is("prim.Constant") || entries_.count(n->scope())) continue;
    bool below_op = false;
    for (std::string s = n->scope(); !s.empty() && !below_op; s = parent_path(s)) {
      auto it = entries_.find(s);
      below_op = it != entries_.end() && it->second->op;
    }
    if (!below_op) entry(n->scope(), last);
  }
  std::function<void(ModEntry*, Region*)> add = [&](ModEntry* e, Region* parent) {
    if (e->op) {
      if (!e->children.empty() || !e->params.empty() || !e->buffers.empty())
        throw NoHierarchy{"module '" + e->path + "' is a module op with its own children"};
      return;
    }
    regions_.emplace_back();
    Region* r = &regions_.back();
    r->entry = e;
    r->parent = parent;
    auto info = g_.modules().find(e->path);
    if (info != g_.modules().end()) r->type = info->second.type;
    regions_by_path_[e->path] = r;
    if (parent) parent->kids.push_back(r);
    for (ModEntry* c : e->children) add(c, r);
  };
  add(entries_.at(""), nullptr);
  for (Region& r : regions_) classify(r);
}

void PyEmitter::classify(Region& r) {
  const ModEntry& e = *r.entry;
  bool numeric = !e.children.empty();
  int64_t max_index = -1;
  for (const ModEntry* c : e.children) {
    if (!index_name(c->name) || c->name.size() > 6) {
      numeric = false;
      break;
    }
    max_index = std::max<int64_t>(max_index, std::stoll(c->name));
  }
  if (numeric && max_index >= 2 * static_cast<int64_t>(e.children.size()) + 16) numeric = false;
  bool own_weights = !e.params.empty() || !e.buffers.empty();
  ContainerKind ck = r.parent ? container_kind(r.type) : ContainerKind::None;
  using R = Region::Render;
  if (ck == ContainerKind::ModuleList && numeric && !own_weights)
    r.render = R::ModuleList;
  else if (ck == ContainerKind::ModuleDict && !own_weights)
    r.render = R::ModuleDict;
  else if (ck == ContainerKind::Sequential && !own_weights && !e.children.empty())
    r.render = numeric ? R::Sequential : R::SequentialDict;
  else
    r.render = numeric ? R::SeqClass : R::Class;
}

// Children in the order a container holds them: by index for positional containers.
std::vector<ModEntry*> PyEmitter::ordered_children(const Region& r) const {
  std::vector<ModEntry*> kids = r.entry->children;
  using R = Region::Render;
  if (r.render == R::Sequential || r.render == R::SeqClass || r.render == R::ModuleList)
    std::stable_sort(kids.begin(), kids.end(), [](const ModEntry* a, const ModEntry* b) {
      return std::stoll(a->name) < std::stoll(b->name);
    });
  return kids;
}

void PyEmitter::outline_all() {
  const Block* top = g_.block();
  std::vector<const Node*> nodes;
  for (const Node* n = top->front(); n; n = n->next()) {
    pos_[n] = nodes.size();
    nodes.push_back(n);
  }
  std::map<Region*, std::vector<const Node*>> direct;
  for (const Node* n : nodes) {
    if (n->is("prim.Constant")) continue;
    Region* owner = owner_of(n);
    direct[owner].push_back(n);
    // Nodes nested in n that belong to regions n's owner is not inside: those regions are split.
    // What that marks depends only on the nested node's scope: a run of nodes of one scope (most
    // of a scripted layer's body) is looked up once.
    const std::string* marked = nullptr;
    for_each_deep(n, [&](const Node* m) {
      if (m == n || m->is("prim.Constant") || m->op() == "prim.Return") return;
      if (marked && *marked == m->scope()) return;
      marked = &m->scope();
      for (Region* a = owner_of(m); a; a = a->parent) {
        if (under_or_at(owner->entry->path, a->entry->path)) break;
        a->split = true;
      }
    });
  }
  for (Region* r : post_order()) {
    std::vector<std::pair<size_t, Item>> items;
    for (const Node* n : direct[r]) {
      items.push_back({pos_.at(n), Item{n, nullptr}});
      r->covered.push_back(n);
    }
    for (Region* k : r->kids) {
      r->covered.insert(r->covered.end(), k->covered.begin(), k->covered.end());
      if (k->outlined) {
        items.push_back({first_pos(*k), Item{nullptr, k}});
      } else {
        for (const Item& it : k->items)
          items.push_back({it.node ? pos_.at(it.node) : first_pos(*it.call), it});
      }
    }
    std::stable_sort(items.begin(), items.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [p, it] : items) r->items.push_back(it);
    std::sort(r->covered.begin(), r->covered.end(),
              [&](const Node* a, const Node* b) { return pos_.at(a) < pos_.at(b); });
    if (!order_items(*r)) {
      // Outlined children that cannot be ordered with the rest: write all of r's nodes inline.
      std::function<void(Region*)> inline_all = [&](Region* k) {
        k->outlined = k->chain = false;
        k->inputs.clear();
        k->outputs.clear();
        for (Region* g : k->kids) inline_all(g);
      };
      for (Region* k : r->kids) inline_all(k);
      r->items.clear();
      for (const Node* n : r->covered) r->items.push_back(Item{n, nullptr});
    }
    if (r->parent && can_outline(*r, nodes)) {
      r->outlined = true;
      interface(*r);
      if (r->render == Region::Render::Sequential || r->render == Region::Render::SequentialDict ||
          r->render == Region::Render::SeqClass) {
        r->chain = is_chain(*r);
        if (!r->chain && r->render != Region::Render::SeqClass) r->outlined = false;
      }
      if (r->render == Region::Render::ModuleList || r->render == Region::Render::ModuleDict)
        r->outlined = false;
      if (!r->outlined) r->inputs.clear(), r->outputs.clear();
    }
  }
  Region& root = regions_.front();
  root.inputs.assign(g_.inputs().begin(), g_.inputs().end());
  root.outputs.assign(g_.outputs().begin(), g_.outputs().end());
}

// Every region, children before parents.
std::vector<Region*> PyEmitter::post_order() {
  std::vector<Region*> post;
  std::function<void(Region*)> visit = [&](Region* r) {
    for (Region* k : r->kids) visit(k);
    post.push_back(r);
  };
  visit(&regions_.front());
  return post;
}

size_t PyEmitter::first_pos(const Region& r) const {
  size_t first = SIZE_MAX;
  for (const Node* n : r.covered) first = std::min(first, pos_.at(n));
  return first;
}

// Orders the items so that every item comes after those it reads from, keeping the graph's order
// where it can (Kahn's algorithm, the earliest item first).
bool PyEmitter::order_items(Region& r) {
  size_t n = r.items.size();
  std::unordered_map<const Node*, size_t> item_of;
  for (size_t i = 0; i < n; ++i) {
    if (r.items[i].node)
      item_of[r.items[i].node] = i;
    else
      for (const Node* c : r.items[i].call->covered) item_of[c] = i;
  }
  std::vector<std::set<size_t>> deps(n);
  auto add_deps = [&](size_t i, const Node* t) {
    for (const Read& rd : reads(t)) {
      auto it = item_of.find(rd.top);
      if (it != item_of.end() && it->second != i) deps[i].insert(it->second);
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (r.items[i].node)
      add_deps(i, r.items[i].node);
    else
      for (const Node* c : r.items[i].call->covered) add_deps(i, c);
  }
  std::vector<size_t> missing(n);
  std::vector<std::vector<size_t>> users(n);
  for (size_t i = 0; i < n; ++i) {
    missing[i] = deps[i].size();
    for (size_t d : deps[i]) users[d].push_back(i);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!missing[i]) ready.push(i);
  std::vector<Item> out;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    out.push_back(r.items[i]);
    for (size_t u : users[i])
      if (--missing[u] == 0) ready.push(u);
  }
  if (out.size() != n) return false;
  r.items = std::move(out);
  return true;
}

bool PyEmitter::can_outline(const Region& r, const std::vector<const Node*>& nodes) const {
  if (r.split || r.items.empty() || r.covered.empty()) return false;
  const std::string& path = r.entry->path;
  const Block* top = g_.block();
  // Every module and weight it reaches lies below it.
  bool inside = true;
  bool impure = false;
  std::set<const Node*> cov(r.covered.begin(), r.covered.end());
  for (const Node* t : r.covered) {
    impure = impure || has_side_effects_deep(t);
    for_each_deep(t, [&](const Node* m) {
      if (!m->module().empty() && !under(m->module(), path)) inside = false;
      for (const auto& [key, w] : m->weights())
        if (!under(w, path)) inside = false;
    });
  }
  if (!inside) return false;
  // The nodes of other regions between its first and last node.
  size_t lo = pos_.at(r.covered.front()), hi = pos_.at(r.covered.back());
  std::vector<const Node*> foreign;
  for (size_t i = lo; i <= hi; ++i)
    if (!cov.count(nodes[i]) && !nodes[i]->is("prim.Constant")) foreign.push_back(nodes[i]);
  if (foreign.empty()) return true;
  if (impure) return false;
  std::set<const Node*> after, before;  // depends on the region / the region depends on it
  for (const Node* x : foreign) {
    if (has_side_effects_deep(x)) return false;
    bool dep = false;
    for (const Read& rd : reads(x)) dep = dep || cov.count(rd.top) || after.count(rd.top);
    if (dep) after.insert(x);
  }
  for (auto it = foreign.rbegin(); it != foreign.rend(); ++it) {
    const Node* x = *it;
    bool feeds = false;
    for (const Value* v : x->outputs())
      for (const Use& u : v->uses()) {
        const Node* t = top_of(u.user, top);
        if (cov.count(t) || before.count(t)) feeds = true;
      }
    if (feeds) {
      if (after.count(x)) return false;
      before.insert(x);
    }
  }
  return true;
}

// Inputs: values its nodes read that are made outside it (constants are written in place), in
// the order of first use. Outputs: values it makes that something outside it reads.
void PyEmitter::interface(Region& r) {
  const Block* top = g_.block();
  std::set<const Node*> cov(r.covered.begin(), r.covered.end());
  std::set<const Value*> seen;
  for (const Item& it : r.items) {
    std::vector<const Node*> tops;
    if (it.node)
      tops.push_back(it.node);
    else
      tops = it.call->covered;
    for (const Node* t : tops)
      for (const Read& rd : reads(t)) {
        if (rd.value->node()->is("prim.Constant") || cov.count(rd.top) ||
            !seen.insert(rd.value).second)
          continue;
        r.inputs.push_back(rd.value);
      }
  }
  for (const Node* t : r.covered)
    for (const Value* v : t->outputs()) {
      bool outside = false;
      for (const Use& u : v->uses()) outside = outside || !cov.count(top_of(u.user, top));
      if (outside) r.outputs.push_back(v);
    }
}

// The region's forward is its children called one after the other, in container order (what
// nn.Sequential.forward does); gaps are nn.Identity().
bool PyEmitter::is_chain(const Region& r) const {
  if (r.inputs.size() != 1 || r.outputs.size() != 1) return false;
  std::vector<ModEntry*> kids = ordered_children(r);
  if (kids.size() != r.items.size()) return false;
  const Value* prev = r.inputs[0];
  for (size_t i = 0; i < kids.size(); ++i) {
    const Item& it = r.items[i];
    if (it.node) {
      const Node& n = *it.node;
      if (n.module() != kids[i]->path || n.num_inputs() != 1 || n.num_outputs() != 1 ||
          n.input(0) != prev || n.op().find('.') == std::string::npos ||
          method_module_classes().count(n.op().substr(0, n.op().find('.'))))
        return false;
      prev = n.output(0);
    } else {
      const Region& k = *it.call;
      if (k.entry != kids[i] || k.inputs.size() != 1 || k.outputs.size() != 1 ||
          k.inputs[0] != prev)
        return false;
      prev = k.outputs[0];
    }
  }
  return prev == r.outputs[0];
}

// ---------------------------------------------------------------------------------------------
// accessors

// How `parent` reaches its child `name`, after `base`.
std::string PyEmitter::child_access(const ModEntry* parent, const std::string& name,
                                    const std::string& base, bool weight) const {
  using R = Region::Render;
  Region* pr = weight ? nullptr : region_at(parent->path);
  if (pr && index_name(name) &&
      (pr->render == R::Sequential || pr->render == R::SeqClass || pr->render == R::ModuleList))
    return base + "[" + name + "]";
  if (pr && pr->render == R::ModuleDict) return base + "[" + py_str(name) + "]";
  if (plain_attr(name)) return base + "." + name;
  if (weight) {
    const Weight* w = g_.weights().find(parent->path.empty() ? name : parent->path + "." + name);
    return base + (w && !w->is_param ? ".get_buffer(" : ".get_parameter(") + py_str(name) + ")";
  }
  return base + ".get_submodule(" + py_str(name) + ")";
}

std::string PyEmitter::module_ref(const std::string& path) const {
  if (opts_.flat) return self_path(path);
  TT_ASSERT(under_or_at(path, cur_path_), "module '" + path + "' is outside '" + cur_path_ + "'");
  std::string text = "self";
  const ModEntry* e = entries_.at(cur_path_);
  if (path == cur_path_) return text;
  for (const std::string& c : split(relative(path, cur_path_), '.')) {
    text = child_access(e, c, text, false);
    e = e->by_name.at(c);
  }
  return text;
}

std::string PyEmitter::weight_ref(const std::string& name) const {
  if (opts_.flat) return self_path(name);
  std::string owner = parent_path(name);
  std::string attr = owner.empty() ? name : name.substr(owner.size() + 1);
  std::string base = module_ref(owner);
  auto it = entries_.find(owner);
  return child_access(it->second, attr, base, true);
}

// ---------------------------------------------------------------------------------------------
// the file

std::string PyEmitter::class_base_name(const Region& r) const {
  if (!r.type.empty()) return short_type_name(r.type);
  for (std::string p = r.entry->path; !p.empty(); p = parent_path(p)) {
    std::string last = p.substr(p.rfind('.') == std::string::npos ? 0 : p.rfind('.') + 1);
    if (!index_name(last)) return camel_case(last) + (p == r.entry->path ? "" : "Item");
  }
  return "Block";
}

std::vector<std::string> PyEmitter::emit_classes() {
  build_regions();
  outline_all();
  std::vector<Region*> post = post_order();
  // Classes, bottom-up by level: a class's key and parameters need its children's classes and
  // their final parameters. A region's level is above its children's, and regions of one original
  // class share a level (the highest), so that the structures of one class (a block with a
  // downsample and one without) are compared at one time. A class nested in itself has no such
  // levels: plain heights then, and structures of it at different heights are not merged.
  std::map<Region*, int> height;
  auto own_class = [](const Region* r) {
    return r->render == Region::Render::Class || r->render == Region::Render::SeqClass;
  };
  bool settled = false;
  for (size_t round = 0; round <= regions_.size() + 1 && !settled; ++round) {
    settled = true;
    for (Region* r : post) {
      int h = 0;
      for (Region* k : r->kids) h = std::max(h, height[k] + 1);
      if (h > height[r]) height[r] = h, settled = false;
    }
    std::map<std::string, int> by_type;
    for (Region* r : post)
      if (own_class(r) && !r->type.empty() && r->parent)
        by_type[r->type] = std::max(by_type[r->type], height[r]);
    for (Region* r : post)
      if (own_class(r) && !r->type.empty() && r->parent && height[r] < by_type[r->type])
        height[r] = by_type[r->type], settled = false;
  }
  if (!settled) {
    height.clear();
    for (Region* r : post) {
      int h = 0;
      for (Region* k : r->kids) h = std::max(h, height[k] + 1);
      height[r] = h;
    }
  }
  int max_height = 0;
  for (Region* r : post) max_height = std::max(max_height, height[r]);
  std::vector<std::string> ignored;
  for (int h = 0; h <= max_height; ++h) {
    size_t first_new = classes_.size();
    for (Region* r : post) {
      if (height[r] != h || !own_class(r)) continue;
      build_init(*r);
      // A weightless module whose nodes went to its parent has nothing to build.
      if (r->parent && !r->outlined && r->init.empty()) {
        r->skip = true;
        continue;
      }
      if (r->outlined && !r->chain) {
        r->const_vals.clear();
        r->const_hints.clear();
        r->canon = strip_markers(join(emit_forward(*r, true, ignored), "\n"), &r->const_hints,
                                 &r->const_vals);
      }
      assign_class(*r);
    }
    merge_optional_children(first_new);
    for (size_t k = first_new; k < classes_.size(); ++k) {
      if (classes_[k].merged) continue;
      make_params(classes_[k]);
      make_const_params(classes_[k]);
    }
  }
  // Names, in the order the classes are first met from the top.
  NameAllocator names{python_reserved};
  names.take(class_name());
  names.take("OrderedDict");
  for (const std::string& h : helpers_) names.take(h);
  for (const auto& [q, cls] : named_tuple_class_) names.take(cls);
  std::vector<Region*> pre;
  std::function<void(Region*)> visit_pre = [&](Region* r) {
    pre.push_back(r);
    for (Region* k : r->kids) visit_pre(k);
  };
  visit_pre(&regions_.front());
  std::vector<int> order;  // classes in file order: children first
  for (Region* r : pre) {
    if (r->cls < 0 || !classes_[r->cls].name.empty()) continue;
    ClassInfo& c = classes_[r->cls];
    if (!r->parent) {
      c.name = class_name();
      continue;
    }
    std::string base = names.clean(class_base_name(*r));
    std::string name = base;
    for (int i = 2; names.taken(name) || !names.usable(name); ++i) name = base + std::to_string(i);
    names.take(name);
    c.name = name;
  }
  std::set<int> done;
  for (Region* r : post)
    if (r->cls >= 0 && done.insert(r->cls).second) order.push_back(r->cls);

  std::vector<std::string> out;
  for (int k : order) {
    ClassInfo& c = classes_[k];
    const Region& rep = *c.instances.front();
    if (!out.empty()) out.insert(out.end(), {"", ""});
    bool seq = rep.render == Region::Render::SeqClass;
    out.push_back("class " + c.name + "(" + (seq ? "nn.Sequential" : "nn.Module") + "):");
    class_names_.push_back(c.name);
    std::vector<std::string> sig = {"self"};
    for (const auto& p : c.params) sig.push_back(p.def ? p.name + "=" + *p.def : p.name);
    std::vector<std::string> init = render_init(rep, &c);
    bool has_init = !init.empty() || !c.params.empty() || !rep.parent;
    if (has_init) {
      out.push_back("    def __init__(" + join(sig, ", ") + "):");
      if (!seq) out.push_back("        super().__init__()");
      for (const auto& l : init) out.push_back("        " + l);
    }
    if (rep.parent && (!rep.outlined || rep.chain)) continue;
    std::vector<std::string> params;
    cur_class_ = &c;
    std::vector<std::string> body = emit_forward(*c.instances.front(), false, params);
    size_t marker = 0;
    for (std::string& l : body) l = fill_markers(l, marker);
    cur_class_ = nullptr;
    if (!rep.parent) {
      root_params_ = params;
      params = with_defaults(params);
    }
    if (has_init) out.push_back("");
    params.insert(params.begin(), "self");
    out.push_back("    def forward(" + join(params, ", ") + "):");
    for (const auto& l : body) out.push_back("        " + l);
  }
  return out;
}

bool PyEmitter::try_hierarchy(std::vector<std::string>& lines) {
  try {
    lines = emit_classes();
    return true;
  } catch (const NoHierarchy& e) {
    spdlog::debug("python: flat layout: {}", e.why);
    return false;
  }
}

}  // namespace tt::pyemit
