// The Python emitter's forward: one statement per node (emit_node dispatches to the call,
// control-flow and literal code), the return, and the names of the values.
#include "emitters/python/emitter.h"
#include "exec/alias.h"
#include "passes/pass_util.h"

#include "ir/rewrite.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace tt::pyemit {

// ---------------------------------------------------------------------------------------------
// names

bool python_reserved(const std::string& s) {
  static const std::set<std::string> r = {
      "self", "torch", "nn", "F", "os", "getattr", "setattr", "float", "int", "super", "quant",
      "nni", "nniqat", "nnq", "nnqat", "bool", "len", "list", "dict", "abs", "math", "operator",
      // the other builtins the generated code calls: a value
      // named `any` made `any(state)` raise UnboundLocalError
      "any", "all", "sum", "range", "tuple", "isinstance", "print", "complex", "cmath"};
  return is_keyword(s) || r.count(s) != 0;
}

// The Python builtins the graph calls that python_reserved does not always keep (max, min, str):
// no local may take their names. Kept per graph, so other models keep their names (the result
// of torch.max stays `max`).
const std::set<std::string>& PyEmitter::builtins_called() {
  if (!builtins_called_) {
    builtins_called_.emplace();
    // One walk for all three (it stops once all are found).
    any_node(g_.block(), [&](const Node* n) {
      const std::string& op = n->op();
      if (op == "max" || op == "min" || op == "str") builtins_called_->insert(op);
      return builtins_called_->size() == 3;
    });
  }
  return *builtins_called_;
}

void PyEmitter::reserve_names() {
  for (const std::string& b : builtins_called()) names_.take(b);
  for (const auto& [q, cls] : named_tuple_class_) names_.take(cls);  // the classes it builds
  for (Value* v : g_.inputs())
    if (good_name(v->name())) names_.take(v->name());
  for (Node* n : graph_nodes()) {
    for (Value* v : n->outputs())
      if (good_name(v->name())) names_.take(v->name());
    for (const auto& b : n->blocks())
      for (Value* v : b->inputs())
        if (good_name(v->name())) names_.take(v->name());
  }
}

// Gives `v` a Python name: its IR name when usable, else one derived from `hint`.
std::string PyEmitter::bind_name(Value* v, const std::string& hint) {
  const std::string& ir = v->name();
  std::string name;
  if (auto p = preferred_.find(v); p != preferred_.end()) {
    name = p->second;  // shares a variable with an if/loop result (Note [Control flow in Python])
  } else if (canonical_) {
    name = unique("v");  // structure only (Note [Classes of the generated module])
  } else if (!opts_.flat) {
    // Local to the forward: the source name without the graph-wide suffix (conv1_7 -> conv1).
    std::string base = local_base(ir);
    name = unique(good_name(base) && !all_digits(base) ? base : hint);
  } else if (good_name(ir) && !builtins_called().count(ir)) {
    name = ir;  // reserved up front; IR names are unique
  } else if (!ir.empty() && !all_digits(ir) && !std::isdigit(static_cast<unsigned char>(ir[0]))) {
    name = unique(ir);
  } else {
    name = unique(hint);
  }
  expr_[v] = Expr(name);
  return name;
}

std::string local_base(const std::string& ir_name) {
  size_t us = ir_name.rfind('_');
  if (us != std::string::npos && us > 0 && us + 1 < ir_name.size() &&
      all_digits(ir_name.substr(us + 1)))
    return ir_name.substr(0, us);
  return ir_name;
}

std::string PyEmitter::op_hint(const std::string& op) {
  std::string s = op;
  size_t sep = s.find("::");
  if (sep != std::string::npos) {
    s = s.substr(sep + 2);
    s = s.substr(0, s.find('.'));
  } else {
    s = s.substr(s.rfind('.') + 1);
  }
  return s;
}

std::string PyEmitter::module_hint(const std::string& path) {
  auto comps = split(path, '.');
  std::string h = comps.back();
  for (size_t i = comps.size() - 1;
       i > 0 && !h.empty() && std::isdigit(static_cast<unsigned char>(h[0])); --i)
    h = comps[i - 1] + "_" + h;
  return h;
}

std::string PyEmitter::value_hint(const Value* v) const {
  auto it = expr_.find(v);
  if (it != expr_.end() && is_identifier(it->second.text)) return it->second.text;
  if (inline_.count(v)) return op_hint(v->node()->op());  // x.size(2) -> size
  return "item";
}

// ---------------------------------------------------------------------------------------------
// statements

// Writes `outs = rhs` for a node whose outputs get names from `hint`. Unused outputs become
// `_`; when nothing is used, calls stay as a bare statement, except pure prims and the op
// table's ops that do not mutate (x.dim() left over from a message the loader dropped).
void PyEmitter::assign(const Node& n, const Expr& rhs, const std::string& hint, bool pure,
                       std::vector<std::string>& body, bool first_only) {
  if (n.num_outputs() == 1 && inline_.count(n.output(0))) {
    expr_[n.output(0)] = rhs;  // Note [Expressions written inline]
    return;
  }
  bool any_used = std::any_of(n.outputs().begin(), n.outputs().end(),
                              [](const Value* v) { return v->has_uses(); });
  if (!any_used) {
    for (Value* v : n.outputs()) expr_[v] = Expr{"None"};
    const OpInfo* info = n.info();
    bool mutates = n.op().back() == '_' || n.num_outputs() == 0 || op_has(n, kWritesContainer) ||
                   uses_generator(&n);
    bool known_pure = info && info->kind != OpKind::Module && !mutates && n.blocks().empty();
    if (!pure && !known_pure) body.push_back(rhs.text);
    return;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < (first_only ? 1 : n.num_outputs()); ++i) {
    Value* v = n.output(i);
    if (!v->has_uses()) {
      names.push_back("_");
      expr_[v] = Expr{"None"};
      continue;
    }
    std::string h = n.num_outputs() == 1 || hint.empty() ? hint : hint + "_" + std::to_string(i);
    names.push_back(bind_name(v, h));
  }
  for (size_t i = names.size(); i < n.num_outputs(); ++i) expr_[n.output(i)] = Expr{"None"};
  std::string lhs = join(names, ", ");
  if (names.size() == 1 && n.op() != "prim.TupleUnpack" && n.op() != "prim.ListUnpack") {
    body.push_back(lhs + " = " + rhs.text);
  } else if (names.size() == 1) {
    body.push_back(lhs + ", = " + rhs.text);
  } else {
    body.push_back(lhs + " = " + rhs.text);
  }
}

// Note [Module state in Python]
// A module attribute kept between calls (Note [Module state] in lib/exec/alias.h) is an
// attribute of the generated module too: prim.StateGet reads `self.<module>.<name>` into a local
// where the read is, prim.StateSet assigns it, and __init__ gives it the initial value, the
// input of the reads: constants, weights (registered before, so `self.<weight>` is the buffer
// load_state_dict fills in place, and a list of them sees the loaded values) and lists or tuples
// of those. Only the flat layout writes it (run() falls back to it): the class layout would have
// to outline the reads and writes with their module.
std::string PyEmitter::state_init(const Node& n, const Value* v) {
  const Node* p = v->node();
  if (p && p->is("prim.Constant") && p->attrs().find("value"))
    return literal(p->attrs().at("value"), v->type()).text;
  if (p && p->is("prim.GetAttr") && g_.weights().has(p->weight("value")))
    return weight_ref(p->weight("value"));
  if (p && (p->is("prim.ListConstruct") || p->is("prim.TupleConstruct"))) {
    std::vector<std::string> items;
    for (const Value* i : p->inputs()) items.push_back(state_init(n, i));
    return p->is("prim.ListConstruct") ? py_list(items) : py_tuple(items);
  }
  unsupported(n,
              "the initial value of the module attribute '" + state_path(n) +
                  "' is computed, not a constant, a weight or a list of those",
              "give the attribute a constant initial value");
}

bool PyEmitter::may_be_mutated(const Value* v) {
  if (!mutated_)
    mutated_ = opts_.mutated_memory.valid() ? opts_.mutated_memory.get() : mutated_memory(g_);
  return mutated_->contains(v);
}

void PyEmitter::emit_node(const Node& n, std::vector<std::string>& body) {
  const std::string& op = n.op();
  // A range loop's variable and length (Note [Range loops in Python]): written by the loop.
  if (range_elements_.count(&n) || (n.is("range.length") && range_length_elided(n))) return;
  if (op == "prim.Constant") {
    const AttrValue* v = n.attrs().find("value");
    if (!v) unsupported(n, "the constant has no value", "give it a value attribute");
    try {
      expr_[n.output(0)] = literal(*v, n.output(0)->type());
    } catch (Error& e) {  // a constant Python cannot spell: say which one
      if (e.where().empty()) e.at(location_of(n));
      throw;
    }
    return;
  }
  if (op == "prim.GetAttr") {
    std::string w = n.weight("value");
    if (w.empty())
      unsupported(n, "prim.GetAttr does not name a weight", "add @value=<weight name>");
    if (!g_.weights().has(w))
      unsupported(n, "it reads '" + w + "', which is not a weight of the graph", "add the weight");
    expr_[n.output(0)] = Expr{weight_ref(w)};
    return;
  }
  if (op == "prim.StateGet" || op == "prim.StateSet") {  // Note [Module state in Python]
    std::string owner = self_path(n.attrs().get_str("module"));
    std::string name = n.attrs().get_str("name");
    if (op == "prim.StateSet") {
      body.push_back(assign_attr(owner, name, expr(n.input(0)).text));
      return;
    }
    std::string read =
        is_identifier(name) ? owner + "." + name : "getattr(" + owner + ", " + py_str(name) + ")";
    if (state_inits_.insert(state_path(n)).second) {
      std::string init = state_init(n, n.input(0));
      if (init != read)  // not the buffer of that name itself
        state_init_lines_.push_back(assign_attr(owner, name, init));
    }
    assign(n, Expr{read}, name, /*pure=*/true, body);
    return;
  }
  if (op == "prim.ListConstruct" || op == "prim.TupleConstruct") {
    std::vector<std::string> items;
    bool simple = true;
    for (Value* v : n.inputs()) {
      items.push_back(expr(v).text);
      simple = simple && v->constant() != nullptr;
    }
    bool list = op == "prim.ListConstruct";
    std::string text = list ? py_list(items) : py_tuple(items);
    if (n.output(0)->type().is_named_tuple())  // Note [NamedTuples in Python]
      text = named_tuple_class(n.output(0)->type()) + "(" + join(items, ", ") + ")";
    Value* out = n.output(0);
    // Read only as the initial value of module state: __init__ spells it (state_init, Note
    // [Module state in Python]) and forward reads the attribute, so it needs no statement here
    // (one would be a variable nothing reads).
    bool state_init_only = out->has_uses();
    for (const Use& u : out->uses())
      state_init_only = state_init_only && u.index == 0 && u.user->is("prim.StateGet");
    // The index list of x[i, :, j] read once, by a node of its own block, is written as those
    // subscripts (index_subscripts), evaluated once, where it is read: even when the alias facts
    // cannot tell it from a list something writes, it needs no name of its own (which nothing
    // would read).
    bool subscripts_only = false;
    if (out->num_uses() == 1) {
      const Use& u = out->uses()[0];
      subscripts_only = u.index == 1 && u.user->owning_block() == n.owning_block() &&
                        (u.user->is("Tensor.index") || u.user->is("aten::index.Tensor") ||
                         tensor_inplace_method_of(u.user->op()) == "index_put_");
    }
    if (state_init_only ||
        ((simple || out->num_uses() <= 1) && (!may_be_mutated(out) || subscripts_only))) {
      Expr e{text};
      if (list) e.list_elems = items;
      expr_[out] = e;
    } else {
      assign(n, text, list ? "items" : "values", true, body);
    }
    return;
  }
  if (op == "prim.DictConstruct") {
    if (n.num_inputs() % 2 != 0)
      unsupported(n, "prim.DictConstruct needs (key, value) pairs", "fix the node");
    std::vector<std::string> items;
    for (size_t i = 0; i + 1 < n.num_inputs(); i += 2)
      items.push_back(expr(n.input(i)).text + ": " + expr(n.input(i + 1)).text);
    std::string text = "{" + join(items, ", ") + "}";
    if (n.output(0)->num_uses() <= 1 && !may_be_mutated(n.output(0)))
      expr_[n.output(0)] = Expr{text};
    else
      assign(n, text, "results", true, body);
    return;
  }
  if (op == "prim.TupleUnpack" || op == "prim.ListUnpack") {
    std::string src = n.num_inputs() ? expr(n.input(0)).text : "()";
    std::string base = n.num_inputs() ? value_hint(n.input(0)) : "item";
    assign(n, src, base, true, body);
    return;
  }
  if (op == "prim.TupleIndex") {
    if (n.num_inputs() != 2) unsupported(n, "prim.TupleIndex needs (tuple, index)", "fix the node");
    std::string idx = expr(n.input(1)).text;
    std::string hint = value_hint(n.input(0)) + "_" + idx;
    assign(n, receiver(expr(n.input(0))) + "[" + idx + "]", hint, true, body);
    return;
  }
  if (op == "prim.NumToTensor") {
    if (n.num_inputs() != 1) unsupported(n, "prim.NumToTensor needs one input", "fix the node");
    assign(n, "torch.tensor(" + expr(n.input(0)).text + ")", value_hint(n.input(0)) + "_tensor",
           true, body);
    return;
  }
  if (op == "prim.If") {
    emit_if(n, body);
    return;
  }
  if (op == "prim.Loop") {
    emit_loop(n, body);
    return;
  }
  if (op == "bool" && n.num_inputs() == 1 && n.num_outputs() == 1 &&
      is_condition_only(n.output(0))) {
    expr_[n.output(0)] = expr(n.input(0));  // `if t:` already calls bool(t)
    return;
  }
  if (!n.module().empty()) {
    emit_module_call(n, body);
    return;
  }
  if (op == "prim.RaiseException") {  // the model's own check: raise ValueError("...")
    std::string cls = "RuntimeError";
    if (n.num_inputs() > 1)
      if (const AttrValue* c = n.input(1)->constant())
        if (auto* s = std::get_if<std::string>(c); s && s->rfind("builtins.", 0) == 0)
          cls = s->substr(9);
    body.push_back("raise " + cls + "(" + (n.num_inputs() ? expr(n.input(0)).text : std::string()) +
                   ")");
    return;
  }
  if (op == "prim.Print") {  // the model's own print(...), in program order (an effect)
    std::vector<std::string> args;
    for (Value* v : n.inputs()) args.push_back(expr(v).text);
    body.push_back("print(" + join(args, ", ") + ")");
    return;
  }
  if (op == "prim.Uninitialized") {  // what a branch that raised "returns": never read
    expr_[n.output(0)] = Expr{"None"};
    return;
  }
  if (op.rfind("prim.", 0) == 0)
    unsupported(n, op + " is not supported by the Python emitter",
                "run the passes that lower it or report it as a tinytrace bug");
  emit_call(n, body);
}

std::string PyEmitter::emit_return() {
  const auto& outs = g_.outputs();
  if (outs.empty()) return "return None";
  std::vector<std::string> items;
  for (Value* v : outs) items.push_back(expr(v).text);
  return "return " + join(items, ", ");
}

}  // namespace tt::pyemit
