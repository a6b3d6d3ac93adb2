// The Python emitter's classes, continued: the __init__ of each generated class as expressions
// whose leaves may become constructor parameters, class sharing by structure, and rendering
// (Note [Classes of the generated module] in lib/emitters/python/classes.cpp).
#include "emitters/python/emitter.h"

#include "ir/quant.h"

#include <algorithm>
#include <set>

namespace tt::pyemit {

// ---------------------------------------------------------------------------------------------
// __init__

CExpr PyEmitter::entry_expr(const ModEntry& c) {
  if (c.op) {
    // A module without weights whose constructor needs no argument (an activation, dropout) is
    // one leaf: instances that differ only in it (ReLU or Hardswish) share the class.
    const std::vector<PyParam>* sig = python_signature(c.op->op());
    bool no_required =
        sig && std::all_of(sig->begin(), sig->end(), [](const PyParam& p) { return p.def; });
    if (!c.op->weights().empty() || !no_required || composite_parts(c.op->op()))
      return module_ctor_expr(*c.op);
    CExpr leaf;
    leaf.text = module_ctor(*c.op);
    leaf.module = true;
    leaf.name = plain_attr(c.name) ? c.name : "activation";
    return leaf;
  }
  Region& k = *region_at(c.path);
  using R = Region::Render;
  CExpr e;
  if (k.render == R::Class || k.render == R::SeqClass) {
    e.cls = k.cls;
    const ClassInfo& ci = classes_.at(k.cls);
    for (size_t p = 0; p < ci.params.size(); ++p) {
      if (static_cast<int>(p) == ci.optional_param) {
        auto child = k.entry->by_name.find(ci.optional_child);
        if (child == k.entry->by_name.end()) continue;  // None: the default
        CExpr a = entry_expr(*child->second);
        a.name = ci.params[p].name;
        a.positional = false;
        a.def.reset();
        e.args.push_back(a);
        continue;
      }
      CExpr a;
      a.name = ci.params[p].name;
      a.def = ci.params[p].def;
      a.positional = !a.def && !ci.params[p].module;
      a.text = k.args.at(p);
      e.args.push_back(a);
    }
    return e;
  }
  e.callee = k.render == R::ModuleList   ? "nn.ModuleList"
             : k.render == R::ModuleDict ? "nn.ModuleDict"
                                         : "nn.Sequential";
  e.wrap = k.render == R::ModuleList       ? CExpr::Wrap::List
           : k.render == R::ModuleDict     ? CExpr::Wrap::Dict
           : k.render == R::SequentialDict ? CExpr::Wrap::OrderedDict
                                           : CExpr::Wrap::None;
  if (e.wrap == CExpr::Wrap::OrderedDict) imports_.insert("from collections import OrderedDict");
  e.args = child_exprs(k);
  return e;
}

// The children of a container or nn.Sequential-derived class, gaps filled with nn.Identity().
std::vector<CExpr> PyEmitter::child_exprs(const Region& k) {
  std::vector<CExpr> out;
  bool positional =
      k.render != Region::Render::ModuleDict && k.render != Region::Render::SequentialDict;
  int64_t next = 0;
  for (ModEntry* c : ordered_children(k)) {
    if (const Region* g = region_at(c->path); g && g->skip) continue;  // a gap
    if (positional) {
      for (int64_t i = std::stoll(c->name); next < i; ++next) {
        CExpr id;
        id.callee = "nn.Identity";
        id.positional = true;
        out.push_back(id);
      }
      ++next;
    }
    out.push_back(entry_expr(*c));
    out.back().name = c->name;
    out.back().positional = true;
    out.back().def.reset();
  }
  return out;
}

// The statements of region r's __init__ (the class's, for a Class/SeqClass region).
void PyEmitter::build_init(Region& r) {
  cur_path_ = r.entry->path;
  const ModEntry& e = *r.entry;
  auto attr_of = [](const std::string& weight) {
    size_t dot = weight.rfind('.');
    return dot == std::string::npos ? weight : weight.substr(dot + 1);
  };
  r.init.clear();
  if (r.render == Region::Render::SeqClass) {
    InitStmt s;
    s.kind = InitStmt::Kind::Super;
    s.value.callee = "super().__init__";
    s.value.args = child_exprs(r);
    r.init.push_back(std::move(s));
  }
  for (const auto& w : e.params) {
    const at::Tensor& t = g_.weights().at(w).tensor;
    DType d = weight_dtype(w, t);
    InitStmt s;
    s.kind = InitStmt::Kind::Param;
    s.target = attr_of(w);
    s.value.callee = "nn.Parameter";
    s.value.args.push_back(empty_tensor_expr(t, d, s.target));
    if (!is_float_dtype(d) && !is_complex_dtype(d)) {
      CExpr rg;
      rg.name = "requires_grad";
      rg.text = "False";
      s.value.args.push_back(rg);
    }
    r.init.push_back(std::move(s));
  }
  for (const auto& w : e.buffers) {
    const at::Tensor& t = g_.weights().at(w).tensor;
    InitStmt s;
    s.kind = InitStmt::Kind::Buffer;
    s.target = attr_of(w);
    s.value = empty_tensor_expr(t, weight_dtype(w, t), s.target);
    r.init.push_back(std::move(s));
  }
  if (r.render != Region::Render::SeqClass) {
    for (const ModEntry* c : e.children) {
      if (const Region* k = region_at(c->path); k && k->skip) continue;
      InitStmt s;
      s.kind = InitStmt::Kind::Module;
      s.target = c->name;
      s.value = entry_expr(*c);
      r.init.push_back(std::move(s));
    }
  }
  if (prepared_) add_qconfigs(r, e);
}

// qconfig lines of the leaf modules r builds itself (directly or inside its containers).
void PyEmitter::add_qconfigs(Region& r, const ModEntry& e) {
  using R = Region::Render;
  for (const ModEntry* c : e.children) {
    if (c->op) {
      std::string q = module_qconfig(*c->op);
      if (!q.empty()) {
        InitStmt s;
        s.kind = InitStmt::Kind::Raw;
        s.value.text = module_ref(c->path) + ".qconfig = " + q;
        r.init.push_back(std::move(s));
      }
    } else if (Region* k = region_at(c->path);
               k && k->render != R::Class && k->render != R::SeqClass) {
      add_qconfigs(r, *c);
    }
  }
}

CExpr PyEmitter::empty_tensor_expr(const at::Tensor& t, DType d, const std::string& attr) {
  CExpr e;
  e.callee = "torch.empty";
  e.positional = true;
  auto dim = [&](std::string text) {
    CExpr a;
    a.name = attr + "_size";
    a.positional = true;
    a.text = std::move(text);
    return a;
  };
  if (t.sizes().empty()) e.args.push_back(dim("()"));
  for (int64_t s : t.sizes()) e.args.push_back(dim(std::to_string(s)));
  if (d != DType::F32) {
    CExpr a;
    a.name = "dtype";
    a.text = dtype_python(d);
    e.args.push_back(a);
  }
  return e;
}

namespace {

void collect_leaves(const CExpr& e, std::vector<const CExpr*>& out) {
  if (e.is_leaf()) {
    out.push_back(&e);
    return;
  }
  for (const CExpr& a : e.args) collect_leaves(a, out);
}

}  // namespace

void skeleton(const CExpr& e, std::string& out) {
  out += e.name + (e.positional ? "!" : "") + (e.def ? "=" + *e.def : "") + ":";
  if (e.is_leaf()) {
    out += "?";
    return;
  }
  out += (e.cls >= 0 ? "#" + std::to_string(e.cls) : e.callee) + "/" +
         std::to_string(static_cast<int>(e.wrap)) + "(";
  for (const CExpr& a : e.args) {
    skeleton(a, out);
    out += ",";
  }
  out += ")";
}

std::vector<const CExpr*> PyEmitter::init_leaves(const Region& r) {
  std::vector<const CExpr*> out;
  for (const InitStmt& s : r.init)
    if (s.kind != InitStmt::Kind::Raw &&
        !(s.kind == InitStmt::Kind::Module && !r.optional_child.empty() &&
          s.target == r.optional_child))
      collect_leaves(s.value, out);
  return out;
}

std::string stmt_key(const InitStmt& s) {
  std::string k = std::to_string(static_cast<int>(s.kind)) + " " + s.target + " ";
  if (s.kind == InitStmt::Kind::Raw) return k + s.value.text;
  skeleton(s.value, k);
  return k;
}

// Groups r with the instances of the same class, or starts a class.
void PyEmitter::assign_class(Region& r) {
  std::string key = r.type + "\n" + std::to_string(static_cast<int>(r.render)) + "\n" +
                    (r.outlined && !r.chain ? r.canon : (r.chain ? "<chain>" : "<init>")) + "\n";
  for (const InitStmt& s : r.init) key += stmt_key(s) + "\n";
  r.leaves.clear();
  for (const CExpr* l : init_leaves(r)) r.leaves.push_back(l->text);
  auto it = r.parent ? class_by_key_.find(key) : class_by_key_.end();
  if (it != class_by_key_.end()) {
    r.cls = it->second;
  } else {
    classes_.emplace_back();
    r.cls = static_cast<int>(classes_.size()) - 1;
    if (r.parent) class_by_key_[key] = r.cls;
  }
  classes_[r.cls].instances.push_back(&r);
}

// The constructor parameters of a class: the leaves whose values differ between instances.
void PyEmitter::make_params(ClassInfo& c) {
  const Region& rep = *c.instances.front();
  std::vector<const CExpr*> leaves = init_leaves(rep);
  c.leaf_param.assign(leaves.size(), -1);
  std::vector<std::vector<std::string>> vectors;
  NameAllocator used{[](const std::string& s) { return python_reserved(s); }};
  std::vector<std::pair<ClassInfo::Param, size_t>> found;  // param, first leaf
  for (size_t k = 0; k < leaves.size(); ++k) {
    std::vector<std::string> values;
    for (const Region* in : c.instances) values.push_back(in->leaves.at(k));
    if (std::all_of(values.begin(), values.end(), [&](const auto& v) { return v == values[0]; }))
      continue;
    auto same = std::find(vectors.begin(), vectors.end(), values);
    if (same != vectors.end()) {
      c.leaf_param[k] = static_cast<int>(same - vectors.begin());
      continue;
    }
    vectors.push_back(values);
    ClassInfo::Param p;
    p.name = used.unique(leaves[k]->name.empty() ? "arg" : leaves[k]->name);
    p.def = leaves[k]->def;
    p.module = leaves[k]->module;
    c.leaf_param[k] = static_cast<int>(found.size());
    found.push_back({p, k});
  }
  // Required parameters first (modules last among them: call sites pass those by keyword), then
  // those with defaults (Python's rule), each in leaf order.
  std::vector<int> order;
  for (int pass = 0; pass < 3; ++pass)
    for (size_t i = 0; i < found.size(); ++i) {
      const ClassInfo::Param& p = found[i].first;
      int group = p.def ? 2 : p.module ? 1 : 0;
      if (group == pass) order.push_back(static_cast<int>(i));
    }
  std::vector<int> new_index(found.size());
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = static_cast<int>(i);
    c.params.push_back(found[order[i]].first);
  }
  for (int& lp : c.leaf_param)
    if (lp >= 0) lp = new_index[lp];
  for (Region* in : c.instances) {
    in->args.assign(c.params.size(), "");
    for (size_t i = 0; i < found.size(); ++i)
      in->args[new_index[i]] = in->leaves.at(found[i].second);
  }
  if (!c.optional_child.empty()) {
    ClassInfo::Param p;
    p.name = used.unique(c.optional_child);
    p.def = "None";
    p.module = true;
    c.optional_param = static_cast<int>(c.params.size());
    c.params.push_back(p);
    for (Region* in : c.instances)
      in->args.push_back(in->entry->by_name.count(c.optional_child) ? "<module>" : "None");
  }
}

// Forward numbers that differ between the instances: constructor parameters (one already made
// for an init leaf with the same values is reused), kept as attributes the forward reads.
void PyEmitter::make_const_params(ClassInfo& c) {
  const Region& rep = *c.instances.front();
  size_t n = rep.const_vals.size();
  c.const_attr.assign(n, "");
  c.const_param.assign(n, -1);
  if (c.instances.size() < 2) return;
  NameAllocator attrs{python_reserved};
  for (const ModEntry* k : rep.entry->children) attrs.take(k->name);
  for (const auto& w : rep.entry->params) attrs.take(w.substr(w.rfind('.') + 1));
  for (const auto& w : rep.entry->buffers) attrs.take(w.substr(w.rfind('.') + 1));
  for (const char* m : {"forward", "training"}) attrs.take(m);
  NameAllocator names{python_reserved};
  for (const auto& p : c.params) names.take(p.name);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> values;
    for (const Region* in : c.instances) values.push_back(in->const_vals.at(i));
    if (std::all_of(values.begin(), values.end(), [&](const auto& v) { return v == values[0]; }))
      continue;
    int p = -1;
    for (size_t q = 0; q < c.params.size() && p < 0; ++q) {
      bool same = true;
      for (const Region* in : c.instances) same = same && in->args.at(q) == in->const_vals.at(i);
      if (same && !c.params[q].module) p = static_cast<int>(q);
    }
    if (p < 0) {
      ClassInfo::Param np;
      np.name = names.unique(rep.const_hints.at(i));
      // A new required parameter goes before the ones with defaults.
      size_t at = 0;
      while (at < c.params.size() && !c.params[at].def && !c.params[at].module) ++at;
      c.params.insert(c.params.begin() + static_cast<std::ptrdiff_t>(at), np);
      for (int& lp : c.leaf_param)
        if (lp >= static_cast<int>(at)) ++lp;
      for (int& cp : c.const_param)
        if (cp >= static_cast<int>(at)) ++cp;
      if (c.optional_param >= static_cast<int>(at)) ++c.optional_param;
      for (Region* in : c.instances)
        in->args.insert(in->args.begin() + static_cast<std::ptrdiff_t>(at), in->const_vals.at(i));
      p = static_cast<int>(at);
    }
    c.const_param[i] = p;
    // One attribute per parameter.
    for (size_t j = 0; j < i; ++j)
      if (c.const_param[j] == p) c.const_attr[i] = c.const_attr[j];
    if (c.const_attr[i].empty()) c.const_attr[i] = attrs.unique(c.params[p].name);
  }
}

// ---------------------------------------------------------------------------------------------
// rendering

std::string PyEmitter::render(const CExpr& e, const ParamOf& param_of) {
  if (e.is_leaf()) {
    const std::string* p = param_of(e);
    return p ? *p : e.text;
  }
  std::vector<std::string> args = render_args(e, param_of);
  const char* open[] = {"(", "([", "({", "(OrderedDict(["};
  const char* close[] = {")", "])", "})", "]))"};
  int w = static_cast<int>(e.wrap);
  return callee_text(e) + open[w] + join(args, ", ") + close[w];
}

std::string PyEmitter::callee_text(const CExpr& e) const {
  return e.cls >= 0 ? classes_.at(e.cls).name : e.callee;
}

std::vector<std::string> PyEmitter::render_args(const CExpr& e, const ParamOf& param_of) {
  std::vector<std::string> out;
  for (const CExpr& a : e.args) {
    std::string v;
    if (a.is_leaf()) {
      const std::string* p = param_of(a);
      if (!p && at_default(a)) continue;
      v = p ? *p : a.text;
    } else {
      v = render(a, param_of);
    }
    switch (e.wrap) {
      case CExpr::Wrap::None:
        out.push_back(a.positional ? v : a.name + "=" + v);
        break;
      case CExpr::Wrap::List:
        out.push_back(v);
        break;
      case CExpr::Wrap::Dict:
        out.push_back(py_str(a.name) + ": " + v);
        break;
      case CExpr::Wrap::OrderedDict:
        out.push_back("(" + py_str(a.name) + ", " + v + ")");
        break;
    }
  }
  return out;
}

// `prefix + e + suffix`, split one argument per line when long and e holds modules.
std::vector<std::string> PyEmitter::render_lines(const std::string& prefix, const CExpr& e,
                                                 const std::string& suffix,
                                                 const ParamOf& param_of) {
  // Render once to measure; leaves are looked up in order, so re-render with a fresh lookup.
  size_t mark = leaf_cursor_;
  std::string one = prefix + render(e, param_of) + suffix;
  bool nested =
      std::any_of(e.args.begin(), e.args.end(), [](const CExpr& a) { return !a.is_leaf(); });
  if (one.size() + 8 <= 100 || !nested || e.is_leaf()) return {one};
  leaf_cursor_ = mark;
  const char* open[] = {"(", "([", "({", "(OrderedDict(["};
  const char* close[] = {")", "])", "})", "]))"};
  int w = static_cast<int>(e.wrap);
  std::vector<std::string> lines = {prefix + callee_text(e) + open[w]};
  for (const std::string& a : render_args(e, param_of)) lines.push_back("    " + a + ",");
  lines.push_back(close[w] + suffix);
  return lines;
}

std::vector<std::string> PyEmitter::render_init(const Region& r, const ClassInfo* c) {
  std::vector<std::string> lines;
  leaf_cursor_ = 0;
  ParamOf param_of = [&](const CExpr&) -> const std::string* {
    size_t k = leaf_cursor_++;
    if (!c || k >= c->leaf_param.size() || c->leaf_param[k] < 0) return nullptr;
    return &c->params[c->leaf_param[k]].name;
  };
  for (const InitStmt& s : r.init) {
    std::vector<std::string> part;
    switch (s.kind) {
      case InitStmt::Kind::Super:
        part = render_lines("", s.value, "", param_of);
        break;
      case InitStmt::Kind::Module:
        if (c && !c->optional_child.empty() && s.target == c->optional_child) {
          part = {"self." + s.target + " = " + c->params[c->optional_param].name};
          break;
        }
        part = plain_attr(s.target)
                   ? render_lines("self." + s.target + " = ", s.value, "", param_of)
                   : render_lines("self.add_module(" + py_str(s.target) + ", ", s.value, ")",
                                  param_of);
        break;
      case InitStmt::Kind::Param:
        part = plain_attr(s.target)
                   ? render_lines("self." + s.target + " = ", s.value, "", param_of)
                   : render_lines("self.register_parameter(" + py_str(s.target) + ", ", s.value,
                                  ")", param_of);
        break;
      case InitStmt::Kind::Buffer:
        part =
            render_lines("self.register_buffer(" + py_str(s.target) + ", ", s.value, ")", param_of);
        break;
      case InitStmt::Kind::Raw:
        part = {s.value.text};
        break;
    }
    lines.insert(lines.end(), part.begin(), part.end());
  }
  if (c) {
    std::set<std::string> done;
    for (size_t i = 0; i < c->const_attr.size(); ++i)
      if (!c->const_attr[i].empty() && done.insert(c->const_attr[i]).second)
        lines.push_back("self." + c->const_attr[i] + " = " + c->params[c->const_param[i]].name);
  }
  return lines;
}

}  // namespace tt::pyemit
