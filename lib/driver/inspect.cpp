// `tinytrace inspect`: see inspect.h. The JSON document is built first; the text form is printed
// from it, so both always say the same thing.
#include "driver/inspect.h"

#include "driver/tools_common.h"
#include "emitters/dot.h"
#include "emitters/report.h"
#include "ir/op_table.h"
#include "support/output_set.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <unordered_map>

namespace tt {

using ojson = nlohmann::ordered_json;

std::string ModuleSummary::type() const {
  std::vector<std::string> ops;
  for (const Node* n : calls)
    if (std::find(ops.begin(), ops.end(), n->op()) == ops.end()) ops.push_back(n->op());
  std::string s;
  for (const auto& op : ops) s += (s.empty() ? "" : "+") + op;
  return s;
}

namespace {

std::string parent_of(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string last_of(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

std::vector<ModuleSummary> collect_modules(const Graph& g) {
  // Tree of paths; children in order of first appearance.
  std::unordered_map<std::string, std::vector<std::string>> children;
  std::unordered_map<std::string, ModuleSummary> info;
  info[""].path = "";
  auto add_path = [&](const std::string& path, auto&& self) -> void {
    if (path.empty() || info.count(path)) return;
    std::string parent = parent_of(path);
    self(parent, self);
    info[path].path = path;
    children[parent].push_back(path);
  };
  const WeightStore& ws = g.weights();
  for (const std::string& name : ws.names()) {
    std::string owner = parent_of(name);
    add_path(owner, add_path);
    const Weight& w = ws.at(name);
    int64_t numel = w.tensor.defined() ? w.tensor.numel() : 0;
    // Count the weight in its owner and every ancestor, up to the root.
    for (std::string p = owner;; p = parent_of(p)) {
      ModuleSummary& m = info[p];
      if (w.is_param) {
        m.param_numel += numel;
        ++m.param_tensors;
      } else {
        m.buffer_numel += numel;
        ++m.buffer_tensors;
      }
      if (p.empty()) break;
    }
  }
  for (const Node* n : g.all_nodes()) {
    add_path(n->scope(), add_path);
    if (!n->module().empty()) {
      add_path(n->module(), add_path);
      info[n->module()].calls.push_back(n);
    }
  }
  std::vector<ModuleSummary> out;
  auto walk = [&](const std::string& path, int depth, auto&& self) -> void {
    ModuleSummary m = info[path];
    m.depth = depth;
    auto known = g.modules().find(path);
    if (known != g.modules().end()) m.cls = known->second.type;
    out.push_back(std::move(m));
    auto it = children.find(path);
    if (it == children.end()) return;
    for (const auto& c : it->second) self(c, depth + 1, self);
  };
  walk("", 0, walk);
  return out;
}

ojson inspect_json(const Model& m) {
  const Graph& g = *m.graph;
  ojson doc = ojson::object();
  doc["format"] = "tinytrace-inspect";
  doc["version"] = kInspectVersion;
  doc["source"] = source_json(m.source);
  ojson inputs = ojson::array(), outputs = ojson::array();
  for (const Value* v : g.inputs()) {
    inputs.push_back(signature_json(*v));
    if (const AttrValue* d = g.input_default(v)) {  // Note [Forward defaults] in ir/ir.h
      inputs.back()["default"] = ojson::parse(attr_json(*d));
      inputs.back()["default_text"] = attr_str(*d);
    }
  }
  for (const Value* v : g.outputs()) outputs.push_back(signature_json(*v));
  doc["inputs"] = inputs;
  doc["outputs"] = outputs;

  std::map<std::string, int64_t> histogram;
  ojson fallbacks = ojson::array();
  int64_t op_count = 0;
  for (const Node* n : g.all_nodes()) {
    ++histogram[n->op()];
    if (n->op().rfind("prim.", 0) != 0) ++op_count;
    if (written_as_torch_ops(n->op()))
      fallbacks.push_back(
          ojson{{"op", n->op()},
                {"node", n->num_outputs() ? ojson(n->output()->name()) : ojson(nullptr)},
                {"scope", n->scope()},
                {"loc", n->loc().empty() ? ojson(nullptr) : ojson(n->loc())}});
  }
  int64_t params = 0, param_tensors = 0, buffers = 0, buffer_tensors = 0, bytes = 0;
  for (const std::string& name : g.weights().names()) {
    const Weight& w = g.weights().at(name);
    if (!w.tensor.defined()) continue;
    (w.is_param ? params : buffers) += w.tensor.numel();
    ++(w.is_param ? param_tensors : buffer_tensors);
    bytes += static_cast<int64_t>(w.tensor.nbytes());
  }
  int64_t warnings = 0;
  for (const auto& d : m.diags.items()) warnings += d.severity == Severity::Warning;
  doc["summary"] = ojson{{"node_count", g.num_nodes()}, {"op_count", op_count},
                         {"parameter_count", params},   {"parameter_tensors", param_tensors},
                         {"buffer_count", buffers},     {"buffer_tensors", buffer_tensors},
                         {"weight_bytes", bytes},       {"aten_fallback_count", fallbacks.size()},
                         {"warning_count", warnings}};

  ojson modules = ojson::array();
  for (const ModuleSummary& mi : collect_modules(g)) {
    std::string type = mi.type();
    modules.push_back(ojson{{"path", mi.path},
                            {"name", mi.path.empty() ? ojson(nullptr) : ojson(last_of(mi.path))},
                            {"depth", mi.depth},
                            {"type", type.empty() ? ojson(nullptr) : ojson(type)},
                            {"class", mi.cls.empty() ? ojson(nullptr) : ojson(mi.cls)},
                            {"calls", mi.calls.size()},
                            {"parameter_count", mi.param_numel},
                            {"parameter_tensors", mi.param_tensors},
                            {"buffer_count", mi.buffer_numel},
                            {"buffer_tensors", mi.buffer_tensors}});
  }
  doc["modules"] = modules;
  if (ojson q = quantization_json(g); !q.is_null()) doc["quantization"] = q;
  doc["op_histogram"] = histogram;
  doc["aten_fallbacks"] = fallbacks;
  doc["diagnostics"] = diagnostics_json(m.diags);
  return doc;
}

namespace {

std::string sig_text(const ojson& v) {
  return v["name"].get<std::string>() + " : " + v["type"].get<std::string>();
}

std::string where_text(const ojson& o) {
  std::string s;
  if (o.contains("scope") && o["scope"].is_string() && !o["scope"].get<std::string>().empty())
    s += " in " + o["scope"].get<std::string>();
  if (o.contains("loc") && o["loc"].is_string()) s += " at " + o["loc"].get<std::string>();
  return s;
}

}  // namespace

void print_inspect_text(const ojson& doc, std::ostream& os) {
  const ojson& src = doc["source"];
  const ojson& sum = doc["summary"];
  os << "model       " << (src["path"].is_string() ? src["path"].get<std::string>() : "?") << " ("
     << (src["format"].is_string() ? src["format"].get<std::string>() : "?") << ")\n";
  for (const auto& v : doc["inputs"])
    os << "input       " << sig_text(v)
       << (v.contains("default_text") ? " = " + v["default_text"].get<std::string>() : "") << "\n";
  for (const auto& v : doc["outputs"]) os << "output      " << sig_text(v) << "\n";
  os << "nodes       " << sum["node_count"].get<int64_t>() << " (" << sum["op_count"].get<int64_t>()
     << " ops besides prim.*)\n";
  os << "parameters  " << group_digits(sum["parameter_count"].get<int64_t>()) << " in "
     << sum["parameter_tensors"].get<int64_t>() << " tensors; buffers "
     << group_digits(sum["buffer_count"].get<int64_t>()) << " in "
     << sum["buffer_tensors"].get<int64_t>() << " tensors; weight bytes "
     << group_digits(sum["weight_bytes"].get<int64_t>()) << " ("
     << human_bytes(sum["weight_bytes"].get<int64_t>()) << ")\n";

  os << "\nmodules\n";
  TextTable mt({"module", "class", "type", "params", "buffers", "calls"},
               {false, false, false, true, true, true});
  for (const auto& m : doc["modules"]) {
    int depth = m["depth"].get<int>();
    std::string name =
        m["path"].get<std::string>().empty() ? "(model)" : m["name"].get<std::string>();
    size_t calls = m["calls"].get<size_t>();
    mt.add({std::string(static_cast<size_t>(depth) * 2, ' ') + name,
            m["class"].is_string() ? short_type_name(m["class"].get<std::string>()) : "",
            m["type"].is_string() ? m["type"].get<std::string>() : "",
            group_digits(m["parameter_count"].get<int64_t>()),
            group_digits(m["buffer_count"].get<int64_t>()), calls ? std::to_string(calls) : ""});
  }
  mt.print(os);

  if (doc.contains("quantization")) {
    const ojson& q = doc["quantization"];
    os << "\nquantization (engine " << q["engine"].get<std::string>() << ")\n";
    TextTable qt({"module", "op", "weight", "output"}, {false, false, false, false});
    for (const auto& m : q["modules"])
      qt.add({m["module"].get<std::string>(), m["op"].get<std::string>(),
              m.contains("weight") ? qparams_text(m["weight"]) : "",
              m.contains("output") ? qparams_text(m["output"]) : ""});
    qt.print(os);
  }

  os << "\nops\n";
  std::vector<std::pair<int64_t, std::string>> ops;
  for (const auto& [op, count] : doc["op_histogram"].items())
    ops.emplace_back(count.get<int64_t>(), op);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  TextTable ot({"op", "count"}, {false, true});
  for (const auto& [count, op] : ops) ot.add({op, std::to_string(count)});
  ot.print(os);

  os << "\naten fallbacks (emitted as torch.ops.aten): ";
  if (doc["aten_fallbacks"].empty())
    os << "none\n";
  else {
    os << doc["aten_fallbacks"].size() << "\n";
    for (const auto& f : doc["aten_fallbacks"])
      os << "  " << f["op"].get<std::string>()
         << (f["node"].is_string() ? " (%" + f["node"].get<std::string>() + ")" : "")
         << where_text(f) << "\n";
  }
  os << "warnings: ";
  if (doc["diagnostics"].empty())
    os << "none\n";
  else {
    os << doc["diagnostics"].size() << "\n";
    for (const auto& d : doc["diagnostics"])
      os << "  " << d["severity"].get<std::string>() << " [" << d["code"].get<std::string>() << "] "
         << d["message"].get<std::string>() << where_text(d) << "\n";
  }
}

void run_inspect(const InspectOptions& opts, std::ostream& out) {
  if (!opts.dot_path.empty() && opts.dot_path.back() == '/')
    throw Error(ExitCode::Usage, "--dot needs a file name, not a directory: '" + opts.dot_path +
                                     "' — e.g. --dot model.dot");
  Model m = load_model_with_shapes(opts.model_path, opts.input_shapes);
  std::vector<std::string> written;
  if (!opts.dot_path.empty()) {
    auto slash = opts.dot_path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : opts.dot_path.substr(0, slash);
    std::string file = slash == std::string::npos ? opts.dot_path : opts.dot_path.substr(slash + 1);
    if (dir.empty()) dir = "/";
    OutputSet set(dir);
    if (same_file(set.final_path(file), opts.model_path))
      throw Error(ExitCode::Usage, "--dot '" + opts.dot_path +
                                       "' would overwrite the input model — "
                                       "choose another file name");
    write_dot_outputs(*m.graph, set, file);
    written = set.commit();
  }
  ojson doc = inspect_json(m);
  if (opts.json) {
    if (!written.empty()) doc["written"] = written;
    out << doc.dump(2) << "\n";
    return;
  }
  print_inspect_text(doc, out);
  for (const auto& w : written) out << "wrote " << w << "\n";
}

}  // namespace tt
