// The Python emitter's __main__ block: load the weights from beside the .py, build example
// inputs (--input-shape or the graph's complete input types), run the model and print what it
// returns.
#include "emitters/python/emitter.h"

#include "ir/quant.h"

namespace tt::pyemit {

std::vector<std::string> PyEmitter::emit_main(const std::vector<std::string>& forward_params) {
  // The block's own names (module level, apart from forward's).
  NameAllocator used;
  for (const char* n :
       {"model", "weights_path", "torch", "nn", "F", "os", "print", "tuple", "isinstance"})
    used.take(n);
  used.take(class_name());
  for (const auto& c : class_names_) used.take(c);
  for (const auto& h : helpers_) used.take(h);
  for (const auto& [q, cls] : named_tuple_class_) used.take(cls);
  for (const auto& [alias, mod] : import_aliases()) used.take(alias);
  std::vector<std::string> lines;
  // An int8 model computes bit-exactly what it did only on the engine it was converted with.
  bool quantized = false;
  for (const Node* n : graph_nodes()) quantized = quantized || is_int8_module_op(n->op());
  if (quantized && !opts_.quantized_engine.empty())
    lines.push_back("torch.backends.quantized.engine = " + py_str(opts_.quantized_engine));
  lines.push_back("model = " + class_name() + "()");
  lines.push_back("weights_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), " +
                  py_str(opts_.weights_file) + ")");
  lines.push_back("model.load_state_dict(torch.load(weights_path), strict=True)");
  lines.push_back("model.eval()");

  std::vector<InputSpec> specs = example_specs();
  // Inputs after the specs' are left to their defaults (example_specs).
  if (specs.size() < g_.num_required_inputs() || specs.size() > g_.inputs().size()) {
    lines.push_back(
        "print(\"example input shapes are unknown: re-run tinytrace with --input-shape to get "
        "example inputs\")");
    return lines;
  }
  lines.push_back("torch.manual_seed(0)");
  std::vector<std::string> args;
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string name = used.fresh(forward_params[i]);
    args.push_back(name);
    lines.push_back(name + " = " + example_tensor(specs[i]));
  }
  // Outputs: a returned tuple/list is unpacked into its elements' names.
  std::vector<const Value*> elems;
  bool unpack = false;
  const auto& outs = g_.outputs();
  if (outs.size() == 1) {
    const Node* p = outs[0]->node();
    // A list some node changes in place has another length by the end (Note [Container
    // mutation] in exec/alias.h): kept whole.
    if (p && (p->op() == "prim.TupleConstruct" || p->op() == "prim.ListConstruct") &&
        p->owning_block() == g_.block() && !may_be_mutated(outs[0])) {
      elems.assign(p->inputs().begin(), p->inputs().end());
      unpack = true;
    } else {
      elems.push_back(outs[0]);
    }
  } else {
    elems.assign(outs.begin(), outs.end());
    unpack = true;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < elems.size(); ++i) {
    std::string h = unpack ? value_hint(elems[i]) : "output";
    if (h == "item") h = "output_" + std::to_string(i);
    names.push_back(used.fresh(h));
  }
  std::string call = "model(" + join(args, ", ") + ")";
  lines.push_back("with torch.no_grad():");
  if (names.empty())
    lines.push_back("    " + call);
  else if (unpack && names.size() == 1)
    lines.push_back("    " + names[0] + ", = " + call);
  else
    lines.push_back("    " + join(names, ", ") + " = " + call);
  for (size_t i = 0; i < names.size(); ++i) {
    const Type& t = elems[i]->type();
    const std::string& nm = names[i];
    std::string what;
    if (t.is_tensor())
      what = "tuple(" + nm + ".shape)";
    else if (t.kind == Type::Kind::Any)
      what = "tuple(" + nm + ".shape) if isinstance(" + nm + ", torch.Tensor) else " + nm;
    else
      what = nm;
    lines.push_back("print(" + py_str(nm + ":") + ", " + what + ")");
  }
  return lines;
}

std::vector<InputSpec> PyEmitter::example_specs() const {
  if (!opts_.example_inputs.empty()) {
    // Inputs with a default may be left out from the end (Note [Forward defaults] in ir/ir.h).
    size_t given = opts_.example_inputs.size();
    if (given > g_.inputs().size() || given < g_.num_required_inputs())
      throw Error(ExitCode::Usage, std::to_string(opts_.example_inputs.size()) +
                                       " example input shape(s) given but the model takes " +
                                       std::to_string(g_.inputs().size()) +
                                       " input(s) — pass --input-shape once per input");
    return opts_.example_inputs;
  }
  std::vector<InputSpec> specs;
  for (const Value* v : g_.inputs()) {
    if (g_.input_default(v)) break;  // called with its default
    const Type& t = v->type();
    if (!t.is_complete()) return {};
    specs.push_back({*t.shape, t.dtype});
  }
  return specs;
}

std::string PyEmitter::example_tensor(const InputSpec& s) {
  std::vector<std::string> dims;
  for (int64_t d : s.shape) dims.push_back(std::to_string(d));
  std::string shape_tuple = py_tuple(dims);
  std::string shape_args = dims.empty() ? "()" : join(dims, ", ");
  if (is_float_dtype(s.dtype) || is_complex_dtype(s.dtype)) {
    std::string r = "torch.randn(" + shape_args;
    if (s.dtype != DType::F32) r += std::string(", dtype=") + dtype_python(s.dtype);
    return r + ")";
  }
  if (s.dtype == DType::Bool) return "torch.randint(0, 2, " + shape_tuple + ", dtype=torch.bool)";
  std::string r = "torch.randint(0, 10, " + shape_tuple;
  if (s.dtype != DType::I64) r += std::string(", dtype=") + dtype_python(s.dtype);
  return r + ")";
}

}  // namespace tt::pyemit
