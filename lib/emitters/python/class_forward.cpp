// The Python emitter's classes, continued: the forward of a composite module (its nodes and its
// outlined children's calls), the numbers it writes as markers, and optional children
// (Note [Classes of the generated module] in lib/emitters/python/classes.cpp).
#include "emitters/python/emitter.h"

#include <set>

namespace tt::pyemit {

// ---------------------------------------------------------------------------------------------
// forwards

void PyEmitter::reset_forward_state() {
  names_ = NameAllocator{python_reserved};
  for (const std::string& b : builtins_called()) names_.take(b);
  for (const auto& [q, cls] : named_tuple_class_) names_.take(cls);
  expr_.clear();
  preferred_.clear();
  loop_vars_.clear();
  inline_.clear();
}

std::vector<std::string> PyEmitter::emit_forward(Region& r, bool canonical,
                                                 std::vector<std::string>& params) {
  reset_forward_state();
  canonical_ = canonical;
  cur_path_ = r.entry->path;
  params.clear();
  const ModuleInfo* info = nullptr;
  if (auto it = g_.modules().find(r.entry->path); it != g_.modules().end()) info = &it->second;
  for (const Value* v : r.inputs) {
    std::string hint = "x";
    if (!canonical) {
      std::string base = local_base(v->name());
      if (r.inputs.size() == 1 && info && info->forward_args.size() == 1 &&
          good_name(info->forward_args[0]))
        hint = info->forward_args[0];
      else if (good_name(base))
        hint = base;
    }
    params.push_back(bind_name(const_cast<Value*>(v), hint));
  }
  std::vector<std::string> body;
  bind_constants(r);
  plan_inline(r.items, &r, /*top=*/true);
  for (const Item& it : r.items) {
    if (it.node) {
      const Node& n = *it.node;
      if (!n.module().empty() &&
          emit_optional_call(n.module(), {n.inputs().begin(), n.inputs().end()},
                             {n.outputs().begin(), n.outputs().end()}, body))
        continue;
      emit_node(n, body);
    } else if (!emit_optional_call(it.call->entry->path, it.call->inputs, it.call->outputs, body)) {
      emit_region_call(*it.call, body);
    }
  }
  if (!r.parent) {
    body.push_back(emit_return());
  } else if (!r.outputs.empty()) {
    std::vector<std::string> items;
    for (const Value* v : r.outputs) items.push_back(expr(v).text);
    body.push_back("return " + join(items, ", "));
  } else if (body.empty()) {
    body.push_back("pass");
  }
  canonical_ = false;
  return body;
}

// Numbers a forward may take from its class's attributes: ints, floats and lists of them.
static bool parametrizable(const AttrValue& a, const Type& t) {
  using K = Type::Kind;
  if (t.kind != K::Int && t.kind != K::Float && t.kind != K::List) return false;
  return std::holds_alternative<int64_t>(a) || std::holds_alternative<double>(a) ||
         std::holds_alternative<std::vector<int64_t>>(a) ||
         std::holds_alternative<std::vector<double>>(a);
}

// Binds the top-block constants r's nodes read. In a forward that is not the root's, a number is
// written as a marker "\x01hint\x03literal\x02": the text with the markers left empty says the
// structure (two constant nodes that CSE merged in one instance and not in another compare
// equal: each use is its own marker), and the markers, in order, are the numbers each use reads
// (fill_markers writes them as literals, or as the class's attributes where instances differ).
void PyEmitter::bind_constants(Region& r) {
  std::vector<const Node*> consts;
  std::set<const Node*> seen;
  for (const Item& it : r.items)
    if (it.node)
      for (const Read& rd : reads(it.node)) {
        const Node* p = rd.value->node();
        if (p->is("prim.Constant") && p->owning_block() == g_.block() && seen.insert(p).second)
          consts.push_back(p);
      }
  std::vector<std::string> ignored;
  for (const Node* n : consts) {
    emit_node(*n, ignored);  // its literal
    const AttrValue* a = n->attrs().find("value");
    if (!r.parent || !a || !parametrizable(*a, n->output(0)->type())) continue;
    Expr& e = expr_.at(n->output(0));
    e.text = "\x01" + const_hint(n->output(0), r) + "\x03" + e.text + "\x02";
  }
}

// The forward text with its markers emptied; their hints and literals go to `hints`/`vals`.
std::string PyEmitter::strip_markers(const std::string& s, std::vector<std::string>* hints,
                                     std::vector<std::string>* vals) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t a = s.find('\x01', i);
    if (a == std::string::npos) break;
    size_t m = s.find('\x03', a), b = s.find('\x02', a);
    out += s.substr(i, a - i) + "\x01\x02";
    if (hints) hints->push_back(s.substr(a + 1, m - a - 1));
    if (vals) vals->push_back(s.substr(m + 1, b - m - 1));
    i = b + 1;
  }
  return out + s.substr(std::min(i, s.size()));
}

// A forward line with its markers written: number `k` (counted over the forward) as its literal,
// or as `self.attr` where the class keeps it in an attribute.
std::string PyEmitter::fill_markers(const std::string& line, size_t& k) const {
  std::string out;
  size_t i = 0;
  while (true) {
    size_t a = line.find('\x01', i);
    if (a == std::string::npos) break;
    size_t m = line.find('\x03', a), b = line.find('\x02', a);
    std::string lit = line.substr(m + 1, b - m - 1);
    size_t idx = k++;
    std::string text =
        cur_class_ && idx < cur_class_->const_attr.size() && !cur_class_->const_attr[idx].empty()
            ? "self." + cur_class_->const_attr[idx]
            : lit;
    char next = b + 1 < line.size() ? line[b + 1] : ' ';
    if (!text.empty() && text[0] == '-' && (next == '.' || next == '[')) text = "(" + text + ")";
    out += line.substr(i, a - i) + text;
    i = b + 1;
  }
  return out + line.substr(i);
}

// A name for a number from its first use in r: the argument it is passed as ("shifts", "dim").
std::string PyEmitter::const_hint(const Value* v, const Region& r) {
  std::set<const Node*> cov(r.covered.begin(), r.covered.end());
  for (const Use& u : v->uses()) {
    if (!cov.count(top_of(u.user, g_.block())) || !u.user->module().empty()) continue;
    ArgFacts f = arg_facts(candidate_schemas(*u.user, u.user->info()), u.index);
    if (f.known && !f.name.empty() && f.name != "self" && f.name != "input") return f.name;
  }
  return "value";
}

// The call of an optional child: left out when comparing with the instances without it
// (elide_child_), else `y = x` and `if self.child is not None: y = self.child(x)`.
bool PyEmitter::emit_optional_call(const std::string& path, const std::vector<const Value*>& ins,
                                   const std::vector<const Value*>& outs,
                                   std::vector<std::string>& body) {
  bool elide = !elide_child_.empty() && path == elide_child_;
  bool optional = !elide && cur_class_ && !cur_class_->optional_child.empty() &&
                  path == (cur_path_.empty() ? "" : cur_path_ + ".") + cur_class_->optional_child;
  if (!elide && !optional) return false;
  if (elide) ++child_calls_;
  if (ins.size() != 1 || outs.size() != 1) return false;  // written as it is: no merge
  if (elide) {
    ++elided_;
    expr_[outs[0]] = expr(ins[0]);
    return true;
  }
  std::string in = expr(ins[0]).text;
  std::string callee = module_ref(path);
  std::string name = bind_name(const_cast<Value*>(outs[0]), module_hint(path));
  body.push_back(name + " = " + in);
  body.push_back("if " + callee + " is not None:");
  // An input written inline is evaluated once, into the name (Note [Expressions written inline]).
  body.push_back("    " + name + " = " + callee + "(" + (is_identifier(in) ? in : name) + ")");
  return true;
}

// Classes of one original class (made at this height) where one's instances are the other's plus
// one child called once on one value, whose forwards agree when that call is left out: one class
// with the child as an optional constructor argument.
void PyEmitter::merge_optional_children(size_t first_new) {
  std::vector<std::string> ignored;
  for (size_t y = first_new; y < classes_.size(); ++y) {
    for (size_t x = first_new; x < classes_.size(); ++x) {
      ClassInfo& cx = classes_[x];
      ClassInfo& cy = classes_[y];
      if (x == y || cx.merged || cy.merged || !cx.optional_child.empty() ||
          !cy.optional_child.empty())
        continue;
      Region& rx = *cx.instances.front();
      Region& ry = *cy.instances.front();
      if (!rx.parent || !ry.parent || rx.type != ry.type || rx.type.empty() ||
          rx.render != ry.render || rx.render != Region::Render::Class || !rx.outlined ||
          !ry.outlined || ry.init.size() != rx.init.size() + 1)
        continue;
      // The one extra module of y: the statements agree around it.
      std::string extra;
      for (size_t j = 0, i = 0; j < ry.init.size(); ++j) {
        if (i < rx.init.size() && stmt_key(rx.init[i]) == stmt_key(ry.init[j])) {
          ++i;
          continue;
        }
        if (!extra.empty() || ry.init[j].kind != InitStmt::Kind::Module) {
          extra.clear();
          break;
        }
        extra = ry.init[j].target;
      }
      if (extra.empty() || !plain_attr(extra)) continue;
      elide_child_ = ry.entry->path + "." + extra;
      elided_ = child_calls_ = 0;
      std::string canon = strip_markers(join(emit_forward(ry, true, ignored), "\n"));
      elide_child_.clear();
      if (child_calls_ != 1 || elided_ != 1 || canon != rx.canon) continue;
      cy.optional_child = extra;
      for (Region* r : cx.instances) {
        r->cls = static_cast<int>(y);
        cy.instances.push_back(r);
      }
      for (Region* r : cy.instances) r->optional_child = extra;
      cx.instances.clear();
      cx.merged = true;
    }
  }
}

void PyEmitter::emit_region_call(const Region& k, std::vector<std::string>& body) {
  std::vector<std::string> args;
  for (const Value* v : k.inputs) args.push_back(expr(v).text);
  std::string call = module_ref(k.entry->path) + "(" + join(args, ", ") + ")";
  if (k.outputs.empty()) {
    body.push_back(call);
    return;
  }
  std::string hint = module_hint(k.entry->path);
  std::vector<std::string> names;
  for (size_t i = 0; i < k.outputs.size(); ++i)
    names.push_back(bind_name(const_cast<Value*>(k.outputs[i]),
                              k.outputs.size() == 1 ? hint : hint + "_" + std::to_string(i)));
  body.push_back(join(names, ", ") + " = " + call);
}

}  // namespace tt::pyemit
