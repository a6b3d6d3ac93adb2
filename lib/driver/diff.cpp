// `tinytrace diff`: see diff.h for what is compared and why.
#include "driver/diff.h"

#include "driver/inspect.h"
#include "driver/tools_common.h"
#include "emitters/report.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <unordered_map>

namespace tt {

using ojson = nlohmann::ordered_json;

namespace {

std::map<std::string, int64_t> op_counts(const Graph& g) {
  std::map<std::string, int64_t> h;
  for (const Node* n : g.all_nodes())
    if (!n->is("prim.Constant")) ++h[n->op()];
  return h;
}

ojson weight_json(const std::string& name, const Weight& w) {
  return ojson{{"name", name},
               {"kind", w.is_param ? "param" : "buffer"},
               {"type", tensor_type_str(w.tensor)}};
}

// max |a - b| over equal-shaped tensors, in double; also max |a| for a relative figure.
std::pair<double, double> max_delta(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor x = a.is_quantized() ? a.dequantize() : a;
  at::Tensor y = b.is_quantized() ? b.dequantize() : b;
  if (x.numel() == 0) return {0.0, 0.0};
  if (x.is_complex()) {
    x = at::view_as_real(x.resolve_conj());
    y = at::view_as_real(y.resolve_conj());
  }
  at::Tensor xd = x.to(at::kDouble), yd = y.to(at::kDouble);
  double d = (xd - yd).abs().max().item<double>();
  if (std::isnan(d) && at::equal(x, y)) d = 0;  // NaN in both at the same place
  return {d, xd.abs().max().item<double>()};
}

// Signature of one input/output: dtype/shape differences where both sides know them.
std::string signature_difference(const Type& a, const Type& b) {
  if (a.is_tensor() != b.is_tensor()) {
    if (a.kind == Type::Kind::Any || b.kind == Type::Kind::Any) return "";
    return "type " + a.str() + " vs " + b.str();
  }
  if (!a.is_tensor())
    return a.kind == b.kind || a.kind == Type::Kind::Any || b.kind == Type::Kind::Any
               ? ""
               : "type " + a.str() + " vs " + b.str();
  std::string what;
  if (a.dtype != DType::Unknown && b.dtype != DType::Unknown && a.dtype != b.dtype)
    what = std::string("dtype ") + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype);
  if (a.shape && b.shape) {
    bool differ = a.shape->size() != b.shape->size();
    for (size_t i = 0; !differ && i < a.shape->size(); ++i)
      differ = (*a.shape)[i] >= 0 && (*b.shape)[i] >= 0 && (*a.shape)[i] != (*b.shape)[i];
    if (differ)
      what += (what.empty() ? "" : ", ") + std::string("shape ") + a.str() + " vs " + b.str();
  }
  return what;
}

// `ga`/`gb`: the graphs, whose inputs' defaults count too (Note [Forward defaults] in ir/ir.h).
ojson signature_diff(const std::vector<Value*>& a, const std::vector<Value*>& b, bool& changed,
                     const Graph* ga = nullptr, const Graph* gb = nullptr) {
  ojson items = ojson::array();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    std::string what = signature_difference(a[i]->type(), b[i]->type());
    if (ga && gb) {
      const AttrValue* da = ga->input_default(a[i]);
      const AttrValue* db = gb->input_default(b[i]);
      if ((da == nullptr) != (db == nullptr) || (da && !attr_equal(*da, *db)))
        what += (what.empty() ? "" : ", ") + std::string("default ") +
                (da ? attr_str(*da) : "(none)") + " vs " + (db ? attr_str(*db) : "(none)");
    }
    if (what.empty()) continue;
    items.push_back(ojson{
        {"index", i}, {"a", signature_json(*a[i])}, {"b", signature_json(*b[i])}, {"what", what}});
  }
  if (a.size() != b.size() || !items.empty()) changed = true;
  return ojson{{"a_count", a.size()}, {"b_count", b.size()}, {"changed", items}};
}

// Canonical text of every non-constant node, independent of value names: inputs are written
// as the producing node's position, graph input number, or the constant's value.
std::vector<std::string> canonical_nodes(const Graph& g) {
  std::unordered_map<const Value*, std::string> ref;
  for (size_t i = 0; i < g.inputs().size(); ++i) ref[g.inputs()[i]] = "in" + std::to_string(i);
  std::vector<std::string> out;
  size_t block_no = 0;
  for (const Node* n : g.all_nodes()) {
    if (n->is("prim.Constant")) continue;
    size_t idx = out.size();
    for (size_t o = 0; o < n->num_outputs(); ++o)
      ref[n->output(o)] = "#" + std::to_string(idx) + (o ? "." + std::to_string(o) : "");
    for (const auto& b : n->blocks()) {
      for (size_t i = 0; i < b->inputs().size(); ++i)
        ref[b->inputs()[i]] = "b" + std::to_string(block_no) + "." + std::to_string(i);
      ++block_no;
    }
    std::string s = n->op();
    if (!n->attrs().empty()) {
      s += "[";
      for (const auto& [k, v] : n->attrs().items()) s += k + "=" + attr_str(v) + ",";
      s += "]";
    }
    s += "(";
    for (const Value* v : n->inputs()) {
      if (const AttrValue* c = v->constant())
        s += "=" + attr_str(*c);
      else {
        auto it = ref.find(v);
        s += it == ref.end() ? "?" : it->second;
      }
      s += ",";
    }
    s += ")";
    for (const auto& [k, w] : n->weights()) s += " @" + k + "=" + w;
    if (!n->module().empty()) s += " #module=" + n->module();
    out.push_back(s);
  }
  return out;
}

std::string node_text(const Graph& g, size_t canonical_index) {
  size_t i = 0;
  for (const Node* n : g.all_nodes()) {
    if (n->is("prim.Constant")) continue;
    if (i++ != canonical_index) continue;
    std::string s = n->num_outputs() ? "%" + n->output()->name() + " = " : "";
    s += n->op();
    if (!n->module().empty())
      s += " (" + n->module() + ")";
    else if (!n->scope().empty())
      s += " in " + n->scope();
    return s;
  }
  return "(none)";
}

// Note [Diff of quantization parameters]
// Two int8 models of one float model that differ only in calibration have the same ops, modules
// and weight shapes; what differs is each quantized weight's scale / zero point (per tensor or per
// channel) and each module's output scale / zero point. Those count as changes on their own, even
// where the dequantized values happen to agree: the entries of the report's `quantization` section
// (quantization_json, lib/emitters/report.cpp) are compared by weight name and by module path,
// and the engine the models were converted with.
ojson quantization_diff(const Graph& a, const Graph& b) {
  ojson qa = quantization_json(a), qb = quantization_json(b);
  ojson changed = ojson::array();
  if (qa.is_null() && qb.is_null()) return changed;
  auto strip = [](ojson q) {
    q.erase("name");
    return q;
  };
  auto by = [&](const ojson& q, const char* list, const char* key, const char* field) {
    std::map<std::string, ojson> m;
    if (q.is_null()) return m;
    for (const auto& e : q[list])
      if (!field)
        m[e[key].get<std::string>()] = strip(e);
      else if (e.contains(field))
        m[e[key].get<std::string>()] = strip(e[field]);
    return m;
  };
  auto compare = [&](const char* what, const std::map<std::string, ojson>& x,
                     const std::map<std::string, ojson>& y) {
    for (const auto& [name, p] : x) {
      auto it = y.find(name);
      if (it != y.end() && it->second != p)
        changed.push_back(ojson{{"what", what}, {"name", name}, {"a", p}, {"b", it->second}});
    }
  };
  compare("weight", by(qa, "weights", "name", nullptr), by(qb, "weights", "name", nullptr));
  compare("output", by(qa, "modules", "module", "output"), by(qb, "modules", "module", "output"));
  if (!qa.is_null() && !qb.is_null() && qa["engine"] != qb["engine"])
    changed.push_back(
        ojson{{"what", "engine"}, {"name", ""}, {"a", qa["engine"]}, {"b", qb["engine"]}});
  return changed;
}

}  // namespace

ojson diff_json(const Model& ma, const Model& mb) {
  const Graph& a = *ma.graph;
  const Graph& b = *mb.graph;
  ojson doc = ojson::object();
  doc["format"] = "tinytrace-diff";
  doc["version"] = kDiffVersion;
  doc["a"] = source_json(ma.source);
  doc["b"] = source_json(mb.source);

  // ops
  std::map<std::string, int64_t> ha = op_counts(a), hb = op_counts(b);
  std::set<std::string> all_ops;
  for (const auto& [k, v] : ha) all_ops.insert(k);
  for (const auto& [k, v] : hb) all_ops.insert(k);
  ojson ops = ojson::array();
  int64_t ops_added = 0, ops_removed = 0;
  for (const auto& op : all_ops) {
    int64_t ca = ha.count(op) ? ha[op] : 0, cb = hb.count(op) ? hb[op] : 0;
    if (ca == cb) continue;
    (cb > ca ? ops_added : ops_removed) += std::abs(cb - ca);
    ops.push_back(ojson{{"op", op}, {"a", ca}, {"b", cb}, {"delta", cb - ca}});
  }

  // parameters and buffers
  const WeightStore& wa = a.weights();
  const WeightStore& wb = b.weights();
  ojson p_added = ojson::array(), p_removed = ojson::array(), p_changed = ojson::array();
  std::set<std::string> added_names, removed_names;
  for (const std::string& name : wa.names()) {
    const Weight& x = wa.at(name);
    const Weight* y = wb.find(name);
    if (!y) {
      p_removed.push_back(weight_json(name, x));
      removed_names.insert(name);
      continue;
    }
    ojson c = {{"name", name},
               {"a", ojson{{"kind", x.is_param ? "param" : "buffer"},
                           {"type", tensor_type_str(x.tensor)}}},
               {"b", ojson{{"kind", y->is_param ? "param" : "buffer"},
                           {"type", tensor_type_str(y->tensor)}}}};
    bool changed = x.is_param != y->is_param;
    if (x.tensor.defined() != y->tensor.defined()) changed = true;
    if (x.tensor.defined() && y->tensor.defined()) {
      if (x.tensor.scalar_type() != y->tensor.scalar_type() ||
          x.tensor.sizes() != y->tensor.sizes()) {
        changed = true;
        c["max_abs_delta"] = nullptr;
        c["relative"] = nullptr;
      } else {
        auto [d, mx] = max_delta(x.tensor, y->tensor);
        c["max_abs_delta"] = std::isnan(d) ? ojson("nan") : ojson(d);
        c["relative"] = std::isnan(d) ? ojson("nan") : ojson(mx > 0 ? d / mx : d);
        if (d != 0) changed = true;
      }
    }
    if (changed) p_changed.push_back(c);
  }
  for (const std::string& name : wb.names())
    if (!wa.has(name)) {
      p_added.push_back(weight_json(name, wb.at(name)));
      added_names.insert(name);
    }

  // modules
  std::map<std::string, ModuleSummary> mods_a, mods_b;
  std::vector<std::string> order;
  for (auto& m : collect_modules(a))
    if (!m.calls.empty()) {
      order.push_back(m.path);
      mods_a.emplace(m.path, std::move(m));
    }
  for (auto& m : collect_modules(b))
    if (!m.calls.empty()) {
      if (!mods_a.count(m.path)) order.push_back(m.path);
      mods_b.emplace(m.path, std::move(m));
    }
  ojson m_added = ojson::array(), m_removed = ojson::array(), m_changed = ojson::array();
  for (const auto& path : order) {
    auto ia = mods_a.find(path), ib = mods_b.find(path);
    if (ib == mods_b.end()) {
      m_removed.push_back(
          ojson{{"path", path}, {"type", ia->second.type()}, {"calls", ia->second.calls.size()}});
      continue;
    }
    if (ia == mods_a.end()) {
      m_added.push_back(
          ojson{{"path", path}, {"type", ib->second.type()}, {"calls", ib->second.calls.size()}});
      continue;
    }
    const ModuleSummary& x = ia->second;
    const ModuleSummary& y = ib->second;
    ojson attrs = ojson::array();
    if (x.type() == y.type()) {
      const Attrs& ax = x.calls.front()->attrs();
      const Attrs& ay = y.calls.front()->attrs();
      std::vector<std::string> names;
      for (const auto& [k, v] : ax.items()) names.push_back(k);
      for (const auto& [k, v] : ay.items())
        if (!ax.has(k)) names.push_back(k);
      for (const auto& k : names) {
        const AttrValue* va = ax.find(k);
        const AttrValue* vb = ay.find(k);
        if (va && vb && attr_equal(*va, *vb)) continue;
        // The flag mirrors the parameter; its addition/removal is reported there.
        std::string wname = path + "." + k;
        if (added_names.count(wname) || removed_names.count(wname)) continue;
        attrs.push_back(ojson{{"name", k},
                              {"a", va ? ojson(attr_str(*va)) : ojson(nullptr)},
                              {"b", vb ? ojson(attr_str(*vb)) : ojson(nullptr)}});
      }
    }
    if (x.type() != y.type() || x.calls.size() != y.calls.size() || !attrs.empty())
      m_changed.push_back(ojson{{"path", path},
                                {"a_type", x.type()},
                                {"b_type", y.type()},
                                {"a_calls", x.calls.size()},
                                {"b_calls", y.calls.size()},
                                {"attrs", attrs}});
  }

  // inputs / outputs
  bool sig_changed = false;
  ojson signature = {{"inputs", signature_diff(a.inputs(), b.inputs(), sig_changed, &a, &b)},
                     {"outputs", signature_diff(a.outputs(), b.outputs(), sig_changed)}};

  // structure: only worth a word when nothing above explains the difference
  ojson structure = nullptr;
  if (ops.empty() && m_changed.empty() && m_added.empty() && m_removed.empty()) {
    std::vector<std::string> ca = canonical_nodes(a), cb = canonical_nodes(b);
    size_t i = 0;
    while (i < ca.size() && i < cb.size() && ca[i] == cb[i]) ++i;
    if (i < ca.size() || i < cb.size())
      structure = ojson{{"first_difference", i}, {"a", node_text(a, i)}, {"b", node_text(b, i)}};
  }

  ojson q_changed = quantization_diff(a, b);

  bool identical = ops.empty() && m_added.empty() && m_removed.empty() && m_changed.empty() &&
                   p_added.empty() && p_removed.empty() && p_changed.empty() && !sig_changed &&
                   structure.is_null() && q_changed.empty();
  doc["identical"] = identical;
  doc["summary"] = ojson{{"ops_added", ops_added},
                         {"ops_removed", ops_removed},
                         {"modules_added", m_added.size()},
                         {"modules_removed", m_removed.size()},
                         {"modules_changed", m_changed.size()},
                         {"parameters_added", p_added.size()},
                         {"parameters_removed", p_removed.size()},
                         {"parameters_changed", p_changed.size()},
                         {"qparams_changed", q_changed.size()},
                         {"signature_changed", sig_changed},
                         {"structure_changed", !structure.is_null()},
                         {"a_ops", a.num_nodes()},
                         {"b_ops", b.num_nodes()}};
  doc["ops"] = ops;
  doc["modules"] = ojson{{"added", m_added}, {"removed", m_removed}, {"changed", m_changed}};
  doc["parameters"] = ojson{{"added", p_added}, {"removed", p_removed}, {"changed", p_changed}};
  doc["signature"] = signature;
  doc["structure"] = structure;
  doc["quantization"] = q_changed;
  return doc;
}

namespace {

std::string delta_text(const ojson& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v.get<double>());
  return buf;
}

std::string src_text(const ojson& s) {
  return (s["path"].is_string() ? s["path"].get<std::string>() : "?") + " (" +
         (s["format"].is_string() ? s["format"].get<std::string>() : "?") + ")";
}

}  // namespace

void print_diff_text(const ojson& doc, std::ostream& os) {
  const ojson& sum = doc["summary"];
  if (doc["identical"].get<bool>()) {
    os << "identical: " << src_text(doc["a"]) << " and " << src_text(doc["b"]) << " ("
       << sum["a_ops"].get<int64_t>() << " nodes, same ops, modules, parameters and signature)\n";
    return;
  }
  os << "A  " << src_text(doc["a"]) << "\nB  " << src_text(doc["b"]) << "\n";
  if (!doc["ops"].empty()) {
    os << "\nops (count in A → B)\n";
    TextTable t({"op", "A", "B", "Δ"}, {false, true, true, true});
    for (const auto& o : doc["ops"]) {
      int64_t d = o["delta"].get<int64_t>();
      t.add({o["op"].get<std::string>(), std::to_string(o["a"].get<int64_t>()),
             std::to_string(o["b"].get<int64_t>()), (d > 0 ? "+" : "") + std::to_string(d)});
    }
    t.print(os);
  }
  const ojson& mods = doc["modules"];
  if (!mods["added"].empty() || !mods["removed"].empty() || !mods["changed"].empty()) {
    os << "\nmodules\n";
    for (const auto& m : mods["removed"])
      os << "  - " << m["type"].get<std::string>() << " removed at " << m["path"].get<std::string>()
         << "\n";
    for (const auto& m : mods["added"])
      os << "  + " << m["type"].get<std::string>() << " added at " << m["path"].get<std::string>()
         << "\n";
    for (const auto& m : mods["changed"]) {
      std::string path = m["path"].get<std::string>();
      std::string ta = m["a_type"].get<std::string>(), tb = m["b_type"].get<std::string>();
      size_t ca = m["a_calls"].get<size_t>(), cb = m["b_calls"].get<size_t>();
      if (ta != tb) os << "  ~ " << path << ": " << ta << " → " << tb << "\n";
      if (ca != cb)
        os << "  ~ " << path << " (" << tb << "): called " << ca << " → " << cb << " times\n";
      for (const auto& attr : m["attrs"])
        os << "  ~ " << path << " (" << tb << "): " << attr["name"].get<std::string>() << " "
           << (attr["a"].is_null() ? "(unset)" : attr["a"].get<std::string>()) << " → "
           << (attr["b"].is_null() ? "(unset)" : attr["b"].get<std::string>()) << "\n";
    }
  }
  const ojson& ps = doc["parameters"];
  if (!ps["added"].empty() || !ps["removed"].empty() || !ps["changed"].empty()) {
    os << "\nparameters and buffers\n";
    TextTable t({"change", "name", "kind", "A", "B", "max |Δ|"},
                {false, false, false, false, false, true});
    for (const auto& p : ps["changed"]) {
      std::string ka = p["a"]["kind"].get<std::string>(), kb = p["b"]["kind"].get<std::string>();
      t.add({"changed", p["name"].get<std::string>(), ka == kb ? ka : ka + " → " + kb,
             p["a"]["type"].get<std::string>(), p["b"]["type"].get<std::string>(),
             delta_text(p["max_abs_delta"])});
    }
    for (const auto& p : ps["added"])
      t.add({"added", p["name"].get<std::string>(), p["kind"].get<std::string>(), "",
             p["type"].get<std::string>(), ""});
    for (const auto& p : ps["removed"])
      t.add({"removed", p["name"].get<std::string>(), p["kind"].get<std::string>(),
             p["type"].get<std::string>(), "", ""});
    t.print(os);
  }
  if (doc.contains("quantization") && !doc["quantization"].empty()) {
    os << "\nquantization parameters (Note [Diff of quantization parameters])\n";
    for (const auto& q : doc["quantization"]) {
      std::string what = q["what"].get<std::string>();
      auto text = [&](const ojson& v) {
        return v.is_string() ? v.get<std::string>() : qparams_text(v);
      };
      os << "  ~ "
         << (what == "engine" ? "engine" : q["name"].get<std::string>() + " (" + what + ")") << ": "
         << text(q["a"]) << " → " << text(q["b"]) << "\n";
    }
  }
  for (const char* side : {"inputs", "outputs"}) {
    const ojson& s = doc["signature"][side];
    if (s["a_count"] == s["b_count"] && s["changed"].empty()) continue;
    os << "\n" << side << "\n";
    if (s["a_count"] != s["b_count"])
      os << "  count " << s["a_count"].get<size_t>() << " → " << s["b_count"].get<size_t>() << "\n";
    for (const auto& c : s["changed"])
      os << "  #" << c["index"].get<size_t>() << " (" << c["a"]["name"].get<std::string>()
         << "): " << c["what"].get<std::string>() << "\n";
  }
  if (!doc["structure"].is_null()) {
    const ojson& s = doc["structure"];
    os << "\nstructure: same op counts, but the graphs differ in wiring or constant arguments from "
          "node "
       << s["first_difference"].get<size_t>() << ":\n  A: " << s["a"].get<std::string>()
       << "\n  B: " << s["b"].get<std::string>() << "\n";
  }
  os << "\nsummary: " << sum["ops_added"].get<int64_t>() << " op(s) added, "
     << sum["ops_removed"].get<int64_t>() << " removed; modules "
     << sum["modules_added"].get<size_t>() << " added, " << sum["modules_removed"].get<size_t>()
     << " removed, " << sum["modules_changed"].get<size_t>() << " changed; parameters/buffers "
     << sum["parameters_added"].get<size_t>() << " added, "
     << sum["parameters_removed"].get<size_t>() << " removed, "
     << sum["parameters_changed"].get<size_t>() << " changed"
     << (sum["qparams_changed"].get<size_t>()
             ? "; quantization parameters " + std::to_string(sum["qparams_changed"].get<size_t>()) +
                   " changed"
             : "")
     << (sum["signature_changed"].get<bool>() ? "; inputs/outputs changed" : "") << "\n";
}

int run_diff(const DiffOptions& opts, std::ostream& out) {
  // Errors name the file they are about (the CLI cannot tell which of the two it was).
  auto load = [](const std::string& path) {
    try {
      return load_model(path);
    } catch (const Error& e) {
      if (e.code() == ExitCode::Usage) throw;
      throw Error(e.code(), path + ": " + e.what(), e.notes());
    }
  };
  Model a = load(opts.a);
  Model b = load(opts.b);
  ojson doc = diff_json(a, b);
  if (opts.json)
    out << doc.dump(2) << "\n";
  else
    print_diff_text(doc, out);
  return doc["identical"].get<bool>() ? 0 : 1;
}

}  // namespace tt
