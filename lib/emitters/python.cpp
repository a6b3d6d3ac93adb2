// Python emitter: writes a Graph as a standalone, readable PyTorch module (DESIGN.md §2).
//
// Note [Shape of the generated module]
// By default NAME.py has one class per module type of the model (Note [Classes of the generated
// module] in lib/emitters/python/classes.cpp); with --flat (PythonEmitOptions::flat), and as the
// fallback when the module tree cannot be laid out as classes, it is one class:
// - __init__ rebuilds the module tree so that state_dict keys (and their order) equal the
//   original's: each module op's path gets `nn.X(...)` once, intermediate and custom modules are
//   plain `nn.Module()` containers, and weights not owned by a module op are registered on their
//   container as nn.Parameter / persistent buffer. Attribute names that are not identifiers
//   ("0" of a Sequential) go through getattr/setattr, as torch.fx does.
// - forward has one statement per node. Constants, attribute reads (prim.GetAttr) and small
//   list/tuple constructions are inlined into the call that uses them, so the code reads like
//   hand-written PyTorch rather than like an SSA dump.
// - Values keep their IR names; an all-digit name ("no source name") gets one derived from the
//   module path or the op ("conv1", "relu", "cat"), made unique. (The class layout names values
//   per forward: the IR name without its graph-wide "_N" suffix, made unique in that forward.)
//
// The class is declared in python/emitter.h and its methods are split over lib/emitters/python/
// by concern (that header lists the files); the lexical pieces are emitters/pysrc.h.
#include "emitters/python.h"

#include <algorithm>

#include "emitters/python/emitter.h"
#include "ir/quant.h"

#include <cctype>
#include <functional>
#include <sstream>

namespace tt {
namespace pyemit {

[[noreturn]] void unsupported(const Node& n, const std::string& what, const std::string& fix) {
  throw Error(ExitCode::Unsupported,
              "cannot write " + describe(n) + " as Python: " + what + " — " + fix)
      .at(location_of(n));
}

std::string PyEmitter::run() {
  const std::vector<Node*>& nodes = graph_nodes();
  if (!opts_.flat && std::any_of(nodes.begin(), nodes.end(), [](const Node* n) {
        return n->is("prim.StateGet") || n->is("prim.StateSet");
      })) {  // Note [Module state in Python]
    PythonEmitOptions flat = opts_;
    flat.flat = true;
    return PyEmitter(g_, flat, diags_).run();
  }
  for (const Node* n : nodes)
    if (is_quant_stub(n) || is_dequant_stub(n)) prepared_ = true;
  check_structure();
  collect_helpers();
  collect_named_tuples();
  import_named_tuple_types();
  build_module_tree();
  if (!opts_.flat) {
    std::vector<std::string> classes;
    if (!try_hierarchy(classes)) {
      PythonEmitOptions flat = opts_;
      flat.flat = true;
      return PyEmitter(g_, flat, diags_).run();
    }
    std::vector<std::string> main_block = emit_main(root_params_);
    check_class_name();
    std::ostringstream os;
    write_header(os);
    write_helpers(os);
    write_named_tuples(os);
    for (const auto& l : classes) os << l << "\n";
    write_main(os, main_block);
    return os.str();
  }
  std::vector<std::string> init = emit_init();
  reserve_names();
  std::vector<std::string> params;
  for (Value* v : g_.inputs()) params.push_back(bind_name(v, "input"));
  std::vector<std::string> body;
  std::vector<Item> seq;
  for (Node* n : g_.block()->nodes()) seq.push_back(Item{n, nullptr});
  plan_inline(seq, nullptr, /*top=*/true);
  for (Node* n : g_.block()->nodes()) emit_node(*n, body);
  body.push_back(emit_return());
  init.insert(init.end(), state_init_lines_.begin(), state_init_lines_.end());
  std::vector<std::string> main_block = emit_main(params);
  check_class_name();

  std::ostringstream os;
  write_header(os);
  write_helpers(os);
  write_named_tuples(os);
  os << "class " << class_name() << "(nn.Module):\n";
  os << "    def __init__(self):\n";
  os << "        super().__init__()\n";
  for (const auto& l : init) os << "        " << l << "\n";
  os << "\n";
  os << "    def forward("
     << join(
            [&] {
              std::vector<std::string> p = with_defaults(params);
              p.insert(p.begin(), "self");
              return p;
            }(),
            ", ")
     << "):\n";
  for (const auto& l : body) os << "        " << l << "\n";
  write_main(os, main_block);
  return os.str();
}

// Note [Forward defaults] in ir/ir.h: `name=default` for the graph inputs that have one.
std::vector<std::string> PyEmitter::with_defaults(std::vector<std::string> params) {
  for (size_t i = 0; i < params.size() && i < g_.inputs().size(); ++i) {
    const Value* in = g_.inputs()[i];
    const AttrValue* d = g_.input_default(in);
    if (!d) continue;
    const Type& t = contained_type(in->type());
    Expr e = literal(*d, t);
    // A tuple is held as a list of its items (default_fits).
    params[i] +=
        "=" + (t.kind == Type::Kind::Tuple && e.list_elems ? py_tuple(*e.list_elems) : e.text);
  }
  return params;
}

void PyEmitter::write_header(std::ostream& os) const {
  // No tool version here: regenerating with another tinytrace should not change the file.
  os << "\"\"\"" << class_name() << ": PyTorch module generated by tinytrace";
  if (!g_.name().empty()) os << " from the graph " << py_str(g_.name());
  os << ".\"\"\"\n";
  os << "import os\n";
  for (const auto& imp : imports_)
    if (imp.rfind("from ", 0) == 0) os << imp << "\n";
  os << "\n";
  // The ops of custom libraries are registered as Python code registers them: importing the
  // package that loads the library, else loading it (Note [Op libraries] in ir/model.h). A
  // package the code does not name otherwise is imported with importlib (pyflakes would call a
  // plain import unused).
  std::set<std::string> imports = imports_;
  std::vector<std::string> loads;
  for (const std::string& ns : op_namespaces_)
    for (const OpLibrary& lib : opts_.op_libraries) {
      if (!std::count(lib.namespaces.begin(), lib.namespaces.end(), ns)) continue;
      std::string load = lib.package.empty() ? "torch.ops.load_library(" + py_str(lib.path) + ")"
                                             : "importlib.import_module(" + py_str(lib.package) +
                                                   ")  # registers the " + ns + ":: ops";
      if (!lib.package.empty() && imports.count("import " + lib.package)) continue;
      if (!lib.package.empty()) imports.insert("import importlib");
      if (std::find(loads.begin(), loads.end(), load) == loads.end()) loads.push_back(load);
    }
  os << "import torch\n";
  for (const auto& imp : imports)
    if (imp.rfind("from ", 0) != 0) os << imp << "\n";
  os << "import torch.nn as nn\n";
  if (use_functional_) os << "import torch.nn.functional as F\n";
  if (!loads.empty()) {
    os << "\n";
    for (const std::string& load : loads) os << load << "\n";
  }
  os << "\n\n";
}

// Note [Python helper definitions] (ir/py_helpers.h): the helpers of the graph's module ops and
// what they use, each once, a definition before its users.
void PyEmitter::collect_helpers() {
  std::function<void(const PyHelper&)> add = [&](const PyHelper& h) {
    if (std::count(helpers_.begin(), helpers_.end(), h.name)) return;
    for (const std::string& u : h.uses) add(*python_helper(u));
    helpers_.push_back(h.name);
  };
  for (const Node* n : graph_nodes())
    if (const PyHelper* h = python_helper_for(n->op())) add(*h);
}

// The names NAME.py binds at its top level besides the model's class: its imports (`import a.b`
// binds a, `import a.b as x` x, `from m import y` y), the helpers it defines, the names the code
// calls (python_reserved). A model class of the same name (from --name, or a model file named
// DynamicQuantizedLSTM.pt) would replace one of them, and the file would compute something
// else or not run; the user picks another name.
void PyEmitter::check_class_name() const {
  const std::string cls = class_name();
  std::string what;
  if (std::count(helpers_.begin(), helpers_.end(), cls)) what = "the helper class NAME.py defines";
  if (python_reserved(cls)) what = "a name the generated code uses";
  for (const std::string& imp : imports_) {
    std::string bound;
    if (imp.rfind("from ", 0) == 0) {  // `from m import a, b` binds each name
      std::string names = imp.substr(imp.find(" import ") + 8) + ", ";
      for (size_t p = 0, e; (e = names.find(", ", p)) != std::string::npos; p = e + 2)
        if (names.substr(p, e - p) == cls) bound = cls;
    } else if (auto as = imp.find(" as "); as != std::string::npos) {
      bound = imp.substr(as + 4);
    } else {
      bound =
          imp.substr(7, imp.find('.') == std::string::npos ? std::string::npos : imp.find('.') - 7);
    }
    if (bound == cls) what = "a name NAME.py imports (" + imp + ")";
  }
  if (cls == "importlib" || cls == "os") what = "a module NAME.py imports";
  if (!what.empty())
    throw Error(ExitCode::Usage, "the model's class name '" + cls + "' is also " + what +
                                     " — give the model another name with --name");
}

void PyEmitter::write_helpers(std::ostream& os) const {
  for (const std::string& name : helpers_) os << python_helper(name)->source << "\n\n\n";
}

void PyEmitter::write_main(std::ostream& os, const std::vector<std::string>& main_block) const {
  os << "\n\n";
  os << "if __name__ == \"__main__\":\n";
  for (const auto& l : main_block) os << (l.empty() ? "" : "    ") << l << "\n";
}

// ---------------------------------------------------------------------------------------------
// checks

// Control flow is written as Python statements (Note [Control flow in Python]); any other
// node with blocks, or a prim.If / prim.Loop not in the TorchScript form, cannot be.
void PyEmitter::check_structure() {
  for (Node* n : graph_nodes()) {
    if (n->blocks().empty()) continue;
    if (n->is("prim.If")) {
      bool ok = n->num_inputs() == 1 && n->blocks().size() == 2;
      for (const auto& b : n->blocks())
        ok = ok && b->inputs().empty() && b->outputs().size() == n->num_outputs();
      if (!ok)
        unsupported(*n,
                    "prim.If needs one condition and two blocks without arguments, each returning "
                    "one value per output",
                    "fix the node (see testdata/tir/control_flow.tir)");
    } else if (n->is("prim.Loop")) {
      bool ok = n->num_inputs() >= 2 && n->blocks().size() == 1 &&
                n->block(0)->inputs().size() == n->num_inputs() - 1 &&
                n->block(0)->outputs().size() == n->num_inputs() - 1 &&
                n->num_outputs() == n->num_inputs() - 2;
      if (!ok)
        unsupported(*n,
                    "prim.Loop needs inputs (max_trip_count, condition, carried...), one block "
                    "with arguments "
                    "(iteration, carried...) returning (condition, carried...) and one output per "
                    "carried value",
                    "fix the node (see testdata/tir/control_flow.tir)");
    } else {
      unsupported(*n, n->op() + " has nested blocks, which the Python emitter cannot write",
                  "only prim.If and prim.Loop may have blocks");
    }
  }
}

std::string PyEmitter::class_name() const {
  std::string c = opts_.class_name.empty() ? "Model" : opts_.class_name;
  std::string out;
  for (char ch : c) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "Model" + out;
  if (is_keyword(out)) out += "_";
  if (python_reserved(out)) out += "Model";  // `class F` would shadow torch.nn.functional
  return out;
}

}  // namespace pyemit

std::string emit_python(const Graph& g, const PythonEmitOptions& opts, Diagnostics& diags) {
  return pyemit::PyEmitter(g, opts, diags).run();
}

}  // namespace tt
