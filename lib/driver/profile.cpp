// `tinytrace profile`: see profile.h. The timing hook is Interpreter::on_node (top-level nodes
// only, so a prim.If/Loop counts with everything in its blocks); it costs nothing when unset.
#include "driver/profile.h"

#include "driver/tools_common.h"
#include "driver/verify.h"
#include "exec/interpreter.h"
#include "loaders/jit_runner.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <ostream>
#include <unordered_map>

namespace tt {

using ojson = nlohmann::ordered_json;

namespace {

std::vector<c10::IValue> cloned(const std::vector<c10::IValue>& inputs) {
  // Each run gets fresh inputs: a model may modify its inputs in place.
  std::vector<c10::IValue> out;
  for (const auto& v : inputs) out.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  return out;
}

struct Stats {
  double sum = 0, min = 0, max = 0;
  int n = 0;
  void add(double v) {
    min = n ? std::min(min, v) : v;
    max = n ? std::max(max, v) : v;
    sum += v;
    ++n;
  }
  double mean() const { return n ? sum / n : 0; }
  ojson json() const { return ojson{{"mean_ms", mean()}, {"min_ms", min}, {"max_ms", max}}; }
};

ojson node_entry(size_t index, const Node& n, double mean, double total) {
  return ojson{{"index", index},
               {"name", n.num_outputs() ? ojson(n.output()->name()) : ojson(nullptr)},
               {"op", n.op()},
               {"module", n.module().empty() ? ojson(nullptr) : ojson(n.module())},
               {"scope", n.scope()},
               {"mean_ms", mean},
               {"share", total > 0 ? mean / total : 0.0}};
}

}  // namespace

ojson profile_json(const ProfileOptions& opts) {
  if (opts.input_shapes.empty())
    throw Error(ExitCode::Usage,
                "profile needs example inputs — give --input-shape once per model "
                "input (those with a default may be left out from the end), e.g. "
                "--input-shape 1,3,224,224");
  if (opts.runs < 1) throw Error(ExitCode::Usage, "--runs must be at least 1");
  if (opts.warmup < 0) throw Error(ExitCode::Usage, "--warmup must not be negative");
  if (opts.top < 1) throw Error(ExitCode::Usage, "--top must be at least 1");
  Model m = load_model_with_shapes(opts.model_path, opts.input_shapes, /*infer=*/false);
  const Graph& g = *m.graph;
  std::vector<c10::IValue> inputs = make_example_inputs(opts.input_shapes);
  add_default_inputs(g, inputs);  // Note [Forward defaults] in ir/ir.h

  std::vector<Node*> block_nodes = g.block()->nodes();
  std::vector<const Node*> nodes(block_nodes.begin(), block_nodes.end());
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  std::vector<double> node_sum(nodes.size(), 0.0);
  Stats whole, node_total;

  // The reference first: when the inputs do not fit the model, the original says so (a usage
  // error naming --input-shape) rather than some op deep inside the interpreter.
  Stats ts;
  ojson torchscript = nullptr;
  if (m.source.format == "torchscript" || m.source.format == "export") {
    int run_no = 0;
    run_torchscript_file(opts.model_path, cloned(inputs), opts.warmup + opts.runs, [&](double ms) {
      if (run_no++ >= opts.warmup) ts.add(ms);
    });
    torchscript = ts.json();
  }

  {
    c10::InferenceMode guard;  // as the TorchScript reference runs: no autograd bookkeeping
    Interpreter interp(g);
    bool measuring = false;
    double this_run = 0;
    interp.on_node = [&](const Node& n, double ms) {
      if (!measuring) return;
      node_sum[index.at(&n)] += ms;
      this_run += ms;
    };
    for (int r = 0; r < opts.warmup + opts.runs; ++r) {
      measuring = r >= opts.warmup;
      this_run = 0;
      std::vector<c10::IValue> in = cloned(inputs);
      auto t0 = std::chrono::steady_clock::now();
      try {
        interp.run(in);
      } catch (const Error& e) {
        if (r > 0 || m.source.format == "torchscript" || m.source.format == "export") throw;
        std::vector<std::string> notes = e.notes();
        notes.push_back("if the inputs are wrong: check --input-shape (one per input, in order)");
        throw Error(e.code(), e.what(), notes);
      }
      auto t1 = std::chrono::steady_clock::now();
      if (!measuring) continue;
      whole.add(std::chrono::duration<double, std::milli>(t1 - t0).count());
      node_total.add(this_run);
    }
  }

  double total = node_total.mean();
  ojson node_list = ojson::array();
  std::map<std::string, std::pair<int64_t, double>> by_op;  // op -> (nodes, mean ms)
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    double mean = node_sum[i] / opts.runs;
    node_list.push_back(node_entry(i, *nodes[i], mean, total));
    auto& e = by_op[nodes[i]->op()];
    ++e.first;
    e.second += mean;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return node_sum[a] > node_sum[b]; });
  ojson top = ojson::array();
  for (size_t i = 0; i < order.size() && i < static_cast<size_t>(opts.top); ++i)
    top.push_back(node_list[order[i]]);
  std::vector<std::pair<std::string, std::pair<int64_t, double>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  ojson op_types = ojson::array();
  for (const auto& [op, e] : ops)
    op_types.push_back(ojson{{"op", op},
                             {"nodes", e.first},
                             {"mean_ms", e.second},
                             {"share", total > 0 ? e.second / total : 0.0}});

  std::vector<std::string> spec_text;
  for (const auto& s : opts.input_shapes) spec_text.push_back(s.str());
  ojson doc = ojson::object();
  doc["format"] = "tinytrace-profile";
  doc["version"] = kProfileVersion;
  doc["source"] = source_json(m.source);
  doc["inputs"] = spec_text;
  doc["runs"] = opts.runs;
  doc["warmup"] = opts.warmup;
  ojson interp = whole.json();
  interp["node_sum_ms"] = total;
  doc["interpreter"] = interp;
  doc["torchscript"] = torchscript;
  doc["op_types"] = op_types;
  doc["top"] = top;
  doc["nodes"] = node_list;
  return doc;
}

void print_profile_text(const ojson& doc, std::ostream& os) {
  const ojson& src = doc["source"];
  std::string inputs;
  for (const auto& s : doc["inputs"]) inputs += (inputs.empty() ? "" : " ") + s.get<std::string>();
  os << "profile      " << src["path"].get<std::string>() << " ("
     << src["format"].get<std::string>() << "), input " << inputs << ", " << doc["runs"].get<int>()
     << " run(s) after " << doc["warmup"].get<int>() << " warm-up\n";
  const ojson& in = doc["interpreter"];
  double whole = in["mean_ms"].get<double>(), sum = in["node_sum_ms"].get<double>();
  os << "interpreter  " << fixed(whole, 3) << " ms per run (min "
     << fixed(in["min_ms"].get<double>(), 3) << "); the nodes' times sum to " << fixed(sum, 3)
     << " ms (" << fixed(whole > 0 ? 100 * sum / whole : 0, 1) << "% of the run)\n";
  if (doc["torchscript"].is_object()) {
    double ts = doc["torchscript"]["mean_ms"].get<double>();
    os << "torchscript  " << fixed(ts, 3) << " ms per run (min "
       << fixed(doc["torchscript"]["min_ms"].get<double>(), 3)
       << "): the original model through torch::jit, for reference (interpreter/torchscript "
       << fixed(ts > 0 ? whole / ts : 0, 2) << "x)\n";
  } else {
    os << "torchscript  n/a (the reference time needs a TorchScript model)\n";
  }
  os << "\nop types (mean per run; share of the summed node times)\n";
  TextTable t({"op", "nodes", "ms", "share"}, {false, true, true, true});
  for (const auto& o : doc["op_types"])
    t.add({o["op"].get<std::string>(), std::to_string(o["nodes"].get<int64_t>()),
           fixed(o["mean_ms"].get<double>(), 3), fixed(100 * o["share"].get<double>(), 1) + "%"});
  t.print(os);
  os << "\ntop " << doc["top"].size() << " nodes\n";
  TextTable n({"#", "node", "op", "module / scope", "ms", "share"},
              {true, false, false, false, true, true});
  for (const auto& e : doc["top"]) {
    std::string where =
        e["module"].is_string() ? e["module"].get<std::string>() : e["scope"].get<std::string>();
    n.add({std::to_string(e["index"].get<size_t>()),
           e["name"].is_string() ? "%" + e["name"].get<std::string>() : "",
           e["op"].get<std::string>(), where, fixed(e["mean_ms"].get<double>(), 3),
           fixed(100 * e["share"].get<double>(), 1) + "%"});
  }
  n.print(os);
}

void run_profile(const ProfileOptions& opts, std::ostream& out) {
  ojson doc = profile_json(opts);
  if (opts.json)
    out << doc.dump(2) << "\n";
  else
    print_profile_text(doc, out);
}

}  // namespace tt
