// --verify: seeded inputs and output comparison.
#include "driver/verify.h"

#include "exec/interpreter.h"
#include "loaders/jit_runner.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace tt {

std::vector<c10::IValue> make_example_inputs(const std::vector<InputSpec>& specs, uint64_t seed) {
  // A private generator: the inputs do not depend on the global RNG state.
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<c10::IValue> out;
  for (const auto& s : specs) {
    auto st = static_cast<at::ScalarType>(dtype_to_scalar_type(s.dtype));
    if (s.dtype == DType::Unknown) st = at::kFloat;
    at::Tensor t;
    if (at::isFloatingType(st))
      t = at::randn(s.shape, gen, at::TensorOptions().dtype(at::kFloat)).to(st);
    else if (at::isComplexType(st))  // real and imaginary parts N(0, 1/2), as torch.randn
      t = at::randn(s.shape, gen, at::TensorOptions().dtype(st));
    else if (st == at::kBool)
      t = at::randint(0, 2, s.shape, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
    else
      t = at::randint(0, 10, s.shape, gen, at::TensorOptions().dtype(st));
    out.emplace_back(t);
  }
  return out;
}

std::vector<InputSpec> specs_from_graph(const Graph& g) {
  std::vector<InputSpec> specs;
  for (Value* v : g.inputs()) {
    if (g.input_default(v)) break;  // it and the inputs after it have defaults (the verifier)
    if (!v->type().is_complete()) return {};
    specs.push_back({*v->type().shape, v->type().dtype});
  }
  return specs;
}

void add_default_inputs(const Graph& g, std::vector<c10::IValue>& inputs) {
  for (size_t i = inputs.size(); i < g.inputs().size(); ++i) {
    const Value* in = g.inputs()[i];
    const AttrValue* d = g.input_default(in);
    if (!d)
      throw Error(ExitCode::Usage,
                  std::to_string(inputs.size()) + " example input(s) given but the model takes " +
                      std::to_string(g.inputs().size()) + ", of which the first " +
                      std::to_string(g.num_required_inputs()) + " have no default — give those");
    inputs.push_back(default_to_ivalue(*d, in->type()));
  }
}

bool VerifyResult::passed() const {
  if (structure_mismatch) return false;
  for (const auto& o : outputs)
    if (o.shape_mismatch || !(min_cosine > 0 ? o.cosine >= min_cosine : o.rel <= tolerance))
      return false;
  return true;
}

namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void compare_into(const c10::IValue& e, const c10::IValue& a, const std::string& path,
                  VerifyResult& r) {
  if (e.isTensor() && a.isTensor()) {
    at::Tensor te = e.toTensor(), ta = a.toTensor();
    OutputDiff d;
    d.path = path;
    d.shape.assign(te.sizes().begin(), te.sizes().end());
    if (te.sizes() != ta.sizes()) {
      d.shape_mismatch = true;
      d.rel = std::numeric_limits<double>::infinity();
    } else if (te.numel() > 0) {
      // Complex values compare as their (real, imaginary) pairs.
      auto as_real = [](const at::Tensor& t) {
        return t.is_complex() ? at::view_as_real(t.resolve_conj()) : t;
      };
      at::Tensor de = as_real(te).to(at::kDouble), da = as_real(ta).to(at::kDouble);
      // NaN in the same places on both sides is agreement, not a difference.
      at::Tensor both_nan = at::isnan(de).logical_and(at::isnan(da));
      at::Tensor diff = (de - da).abs().masked_fill(both_nan, 0.0);
      if (diff.isnan().any().item<bool>()) {
        d.max_abs = std::numeric_limits<double>::infinity();
      } else {
        d.max_abs = diff.max().item<double>();
      }
      d.max_expected = de.masked_fill(at::isnan(de), 0.0).abs().max().item<double>();
      d.rel = d.max_expected > 0 ? d.max_abs / d.max_expected : d.max_abs;
      // Cosine similarity; two all-zero outputs agree (1), one all-zero against another not.
      at::Tensor fe = de.flatten().nan_to_num(0.0), fa = da.flatten().nan_to_num(0.0);
      double ne = fe.norm().item<double>(), na = fa.norm().item<double>();
      d.cosine = ne == 0 && na == 0   ? 1.0
                 : ne == 0 || na == 0 ? 0.0
                                      : fe.dot(fa).item<double>() / (ne * na);
    }
    r.max_rel = std::max(r.max_rel, d.rel);
    r.outputs.push_back(std::move(d));
    return;
  }
  auto seq = [](const c10::IValue& v, std::vector<c10::IValue>& out) {
    if (v.isTuple()) {
      const auto& el = v.toTupleRef().elements();
      out.assign(el.begin(), el.end());
      return true;
    }
    if (v.isList()) {
      auto l = v.toListRef();
      out.assign(l.begin(), l.end());
      return true;
    }
    return false;
  };
  if (e.isGenericDict() && a.isGenericDict()) {  // by key, in the original's order
    auto de = e.toGenericDict(), da = a.toGenericDict();
    if (de.size() != da.size()) {
      r.structure_mismatch = true;
      return;
    }
    for (const auto& entry : de) {
      auto it = da.find(entry.key());
      if (it == da.end()) {
        r.structure_mismatch = true;
        return;
      }
      std::string key = entry.key().isString() ? entry.key().toStringRef() : entry.key().tagKind();
      compare_into(entry.value(), it->value(), path.empty() ? key : path + "." + key, r);
    }
    return;
  }
  std::vector<c10::IValue> se, sa;
  if (seq(e, se) && seq(a, sa)) {
    if (se.size() != sa.size()) {
      r.structure_mismatch = true;
      return;
    }
    for (size_t i = 0; i < se.size(); ++i)
      compare_into(se[i], sa[i], path.empty() ? std::to_string(i) : path + "." + std::to_string(i),
                   r);
    return;
  }
  if ((e.isInt() || e.isDouble() || e.isBool()) && (a.isInt() || a.isDouble() || a.isBool())) {
    OutputDiff d;
    d.path = path;
    double ve = e.isInt() ? double(e.toInt()) : e.isDouble() ? e.toDouble() : double(e.toBool());
    double va = a.isInt() ? double(a.toInt()) : a.isDouble() ? a.toDouble() : double(a.toBool());
    d.max_abs = std::abs(ve - va);
    d.max_expected = std::abs(ve);
    d.rel = d.max_expected > 0 ? d.max_abs / d.max_expected : d.max_abs;
    r.max_rel = std::max(r.max_rel, d.rel);
    r.outputs.push_back(d);
    return;
  }
  if (e.isNone() && a.isNone()) return;
  if ((e.isString() && a.isString()) || (e.isDevice() && a.isDevice()) ||
      (e.isEnum() && a.isEnum())) {
    // Text (a dict key popped, a mode name), devices and Enum members (the same class, by name:
    // the interpreter's class is its own copy, Note [Enum types]) agree exactly or not at all.
    OutputDiff d;
    d.path = path;
    bool same = e.isString()   ? e.toStringRef() == a.toStringRef()
                : e.isDevice() ? e.toDevice() == a.toDevice()
                               : e.toEnumHolder()->qualifiedClassName() ==
                                         a.toEnumHolder()->qualifiedClassName() &&
                                     e.toEnumHolder()->name() == a.toEnumHolder()->name();
    d.max_abs = d.rel = same ? 0.0 : std::numeric_limits<double>::infinity();
    d.max_expected = 1.0;
    if (!same) d.cosine = 0.0;
    r.max_rel = std::max(r.max_rel, d.rel);
    r.outputs.push_back(d);
    return;
  }
  r.structure_mismatch = true;
}

}  // namespace

VerifyResult compare_outputs(const c10::IValue& expected, const c10::IValue& actual,
                             double tolerance, const std::string& engine) {
  VerifyResult r;
  r.engine = engine;
  r.tolerance = tolerance;
  compare_into(expected, actual, "", r);
  return r;
}

std::vector<c10::IValue> clone_inputs(const std::vector<c10::IValue>& inputs) {
  std::vector<c10::IValue> out;
  for (const auto& v : inputs) out.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  return out;
}

namespace {

// Every tensor value a run computes, by name, as it was right after its node ran.
std::unordered_map<std::string, at::Tensor> record_values(const Graph& g,
                                                          const std::vector<c10::IValue>& inputs) {
  std::unordered_map<std::string, at::Tensor> out;
  Interpreter in(g);
  in.on_value = [&](const Value* v, const c10::IValue& iv) {
    if (iv.isTensor() && !v->name().empty()) out[v->name()] = iv.toTensor().clone();
  };
  in.run(clone_inputs(inputs));
  return out;
}

}  // namespace

std::optional<ValueDifference> first_difference(const Graph& ref, const Graph& g,
                                                const std::vector<c10::IValue>& inputs,
                                                double tolerance) {
  std::unordered_map<std::string, at::Tensor> a, b;
  try {
    a = record_values(ref, inputs);
    b = record_values(g, inputs);
  } catch (const std::exception&) {
    return std::nullopt;  // the verdict stands without a location
  }
  for (const Node* n : g.all_nodes()) {
    for (const Value* v : n->outputs()) {
      auto ia = a.find(v->name());
      auto ib = b.find(v->name());
      if (ia == a.end() || ib == b.end() || ia->second.sizes() != ib->second.sizes()) continue;
      VerifyResult r = compare_outputs(ia->second, ib->second, tolerance, "");
      if (r.passed()) continue;
      ValueDifference d{v->name(),          n->op(),  n->module(),
                        n->scope(),         n->loc(), r.outputs.at(0).max_abs,
                        r.outputs.at(0).rel};
      return d;
    }
  }
  return std::nullopt;
}

std::optional<ValueDifference> first_difference_from_original(
    const Model& loaded, const std::vector<c10::IValue>& inputs, double tolerance) {
  std::vector<std::string> names;
  for (const auto& s : loaded.source_values) names.push_back(s.second);
  std::unordered_map<std::string, at::Tensor> orig, mine;
  try {
    orig = record_torchscript_values(loaded.source.path, clone_inputs(inputs), names);
    mine = record_values(*loaded.graph, inputs);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  for (const auto& [ir_name, jit_name] : loaded.source_values) {
    auto io = orig.find(jit_name);
    auto im = mine.find(ir_name);
    const Value* v = loaded.graph->find_value(ir_name);
    if (io == orig.end() || im == mine.end() || !v || io->second.sizes() != im->second.sizes())
      continue;
    VerifyResult r = compare_outputs(io->second, im->second, tolerance, "");
    if (r.passed()) continue;
    const Node* n = v->node();
    return ValueDifference{ir_name,
                           n->op(),
                           n->module(),
                           n->scope(),
                           n->loc(),
                           r.outputs.at(0).max_abs,
                           r.outputs.at(0).rel};
  }
  return std::nullopt;
}

std::string ValueDifference::str() const {
  std::string s = "%" + value + " (" + op;
  if (!module.empty()) s += " self." + module;
  if (!scope.empty()) s += ", in module '" + scope + "'";
  if (!loc.empty()) s += ", at " + loc;
  return s + "): max |diff| " + fmt(max_abs) + ", relative " + fmt(rel);
}

VerifyResult verify_torchscript_archive(const std::string& path,
                                        const std::vector<c10::IValue>& inputs,
                                        const c10::IValue& expected, double tolerance) {
  c10::IValue actual;
  try {
    actual = run_torchscript_file(path, clone_inputs(inputs));
  } catch (const Error& e) {
    // The original ran on these inputs, so an emitted archive that cannot is our bug.
    throw Error(ExitCode::Internal,
                "--verify: the emitted TorchScript archive does not run on inputs the original "
                "accepts — report it as a tinytrace bug (drop torchscript from --emit meanwhile)",
                {path + ": " + e.what()});
  }
  return compare_outputs(expected, actual, tolerance, "torchscript");
}

std::string VerifyResult::summary() const {
  std::string s = "verify (" + engine + "): ";
  if (structure_mismatch) return s + "FAILED — the outputs differ in number or nesting";
  for (const auto& o : outputs)
    if (o.shape_mismatch)
      return s + "FAILED — output " + (o.path.empty() ? "0" : o.path) + " has another shape";
  s += passed() ? "OK" : "FAILED";
  double max_abs = 0;
  for (const auto& o : outputs)
    if (std::isnan(o.max_abs) || o.max_abs > max_abs) max_abs = o.max_abs;
  s += " — " + std::to_string(outputs.size()) + " output(s), max |diff| " + fmt(max_abs) +
       ", max relative difference " + fmt(max_rel);
  if (min_cosine > 0) {
    double cos = 1;
    for (const auto& o : outputs) cos = std::min(cos, o.cosine);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", cos);
    return s + ", min cosine similarity " + buf + " (at least " + fmt(min_cosine) + ")";
  }
  return s + " (tolerance " + fmt(tolerance) + ")";
}

nlohmann::json VerifyResult::to_json() const {
  nlohmann::json outs = nlohmann::json::array();
  for (const auto& o : outputs) {
    auto num = [](double v) -> nlohmann::json {
      if (std::isfinite(v)) return v;
      return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    };
    outs.push_back({{"output", o.path.empty() ? "0" : o.path},
                    {"shape", o.shape},
                    {"max_abs_diff", num(o.max_abs)},
                    {"max_abs_expected", num(o.max_expected)},
                    {"rel_diff", num(o.rel)},
                    {"cosine", num(o.cosine)},
                    {"shape_mismatch", o.shape_mismatch}});
  }
  return {
      {"engine", engine},
      {"passed", passed()},
      {"tolerance", tolerance},
      {"min_cosine", min_cosine > 0 ? nlohmann::json(min_cosine) : nlohmann::json()},
      {"max_rel_diff", std::isfinite(max_rel) ? nlohmann::json(max_rel) : nlohmann::json("inf")},
      {"structure_mismatch", structure_mismatch},
      {"outputs", outs}};
}

}  // namespace tt
