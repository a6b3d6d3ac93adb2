// Graphviz (DOT) emitter; see dot.h. Layout choices: top-to-bottom, one cluster per module scope
// (nested like the modules), module ops labelled with their instance name and class, edges
// labelled with the value's type (the shape once infer-shapes has run).
#include "emitters/dot.h"

#include "ir/op_table.h"
#include "support/diag.h"
#include "support/output_set.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>
#include <sys/wait.h>

namespace tt {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string last_component(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string parent_path(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Edge label: tensors show dtype and shape when known (nothing when not: "Tensor" on every
// edge is noise); other values show their type ("int", "List[int]").
std::string edge_label(const Value* v) {
  const Type& t = v->type();
  if (t.is_tensor()) return t.shape || t.dtype != DType::Unknown ? t.str() : "";
  if (t.kind == Type::Kind::Any) return "";
  return t.str();
}

std::string node_label(const Node& n) {
  if (n.is("prim.GetAttr")) return n.weights().empty() ? n.op() : n.weights().front().second;
  std::string label;
  if (!n.module().empty())
    label = last_component(n.module()) + "\n" + n.op();
  else
    label = n.op();
  if (n.module().empty() && n.num_outputs() == 1 && !all_digits(n.output()->name()))
    label += "\n%" + n.output()->name();
  // Short constant arguments make function ops readable (flatten(…, 1, -1), add(…, 1)).
  std::vector<std::string> consts;
  for (const Value* in : n.inputs())
    if (const AttrValue* c = in->constant()) {
      std::string s = std::holds_alternative<at::Tensor>(*c) ? "tensor" : attr_str(*c);
      consts.push_back(s.size() > 16 ? s.substr(0, 15) + "…" : s);
    }
  if (!consts.empty() && consts.size() <= 4) {
    std::string j;
    for (const auto& c : consts) j += (j.empty() ? "" : ", ") + c;
    label += "\n(" + j + ")";
  }
  if (!n.blocks().empty()) label += "\n[" + std::to_string(n.blocks().size()) + " block(s)]";
  return label;
}

std::string node_style(const Node& n) {
  if (n.is("prim.GetAttr")) return "shape=note, fillcolor=\"#eeeeee\", fontsize=8";
  if (written_as_torch_ops(n.op())) return "fillcolor=\"#ffc9c9\"";
  if (!n.module().empty()) return "fillcolor=\"#ffe8c2\"";
  if (n.op().rfind("prim.", 0) == 0) return "fillcolor=\"#f2f2f2\", fontsize=8";
  return "fillcolor=\"#dcecff\"";
}

// True when `p` lies inside one of `n`'s nested blocks.
bool nested_in(const Node* p, const Node* n) {
  for (const Block* b = p->owning_block(); b;) {
    const Node* owner = b->owning_node();
    if (!owner) return false;
    if (owner == n) return true;
    b = owner->owning_block();
  }
  return false;
}

// Values a drawn node reads: its inputs and, for nodes with blocks, what the blocks read from
// outside the node.
void collect_reads(const Node* n, const Node* drawn, const Graph& g, std::vector<const Value*>& out,
                   std::set<const Value*>& seen) {
  auto consider = [&](const Value* v) {
    const Node* p = v->node();
    if (p == g.block()->param_node()) {
      if (seen.insert(v).second) out.push_back(v);
      return;
    }
    if (p == drawn || nested_in(p, drawn)) return;  // internal to the drawn node
    if (p->op() == "prim.Param" || p->owning_block() == nullptr) return;  // a nested block input
    if (seen.insert(v).second) out.push_back(v);
  };
  for (const Value* v : n->inputs()) consider(v);
  for (const auto& b : n->blocks()) {
    for (const Node* m : b->nodes()) collect_reads(m, drawn, g, out, seen);
    for (const Value* v : b->outputs()) consider(v);
  }
}

struct Cluster {
  std::vector<std::string> children;  // paths, in order of first appearance
  std::vector<std::string> node_lines;
};

}  // namespace

std::string emit_dot(const Graph& g) {
  std::ostringstream os;
  os << "digraph " << quote(g.name().empty() ? "model" : g.name()) << " {\n"
     << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10, labeljust=l, nodesep=0.25, "
        "ranksep=0.3];\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, "
        "height=0.3];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#666666\", fontcolor=\"#444444\"];\n";

  std::map<const Value*, std::string> producer_id;  // value -> DOT node id
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    std::string id = "in" + std::to_string(i);
    producer_id[v] = id;
    std::string label = v->name();
    if (!edge_label(v).empty()) label += "\n" + edge_label(v);
    os << "  " << id << " [label=" << quote(label) << ", shape=ellipse, fillcolor=\"#c9f0c9\"];\n";
  }

  // Nodes grouped by scope; clusters nest along the module path.
  std::map<std::string, Cluster> clusters;
  std::vector<std::string> top_children;
  std::set<std::string> known;
  auto ensure = [&](const std::string& path, auto&& self) -> void {
    if (path.empty() || known.count(path)) return;
    known.insert(path);
    std::string parent = parent_path(path);
    self(parent, self);
    (parent.empty() ? top_children : clusters[parent].children).push_back(path);
    clusters[path];
  };
  std::vector<std::string> top_lines, edge_lines;
  size_t next_id = 0;
  for (const Node* n : g.block()->nodes()) {
    if (n->is("prim.Constant")) continue;
    std::string id = "n" + std::to_string(next_id++);
    for (const Value* v : n->outputs()) producer_id[v] = id;
    std::string line = id + " [label=" + quote(node_label(*n)) + ", " + node_style(*n) + "];";
    ensure(n->scope(), ensure);
    (n->scope().empty() ? top_lines : clusters[n->scope()].node_lines).push_back(line);
    std::vector<const Value*> reads;
    std::set<const Value*> seen;
    collect_reads(n, n, g, reads, seen);
    for (const Value* v : reads) {
      auto it = producer_id.find(v);
      if (it == producer_id.end()) continue;  // a constant
      std::string label = edge_label(v);
      edge_lines.push_back(it->second + " -> " + id +
                           (label.empty() ? "" : " [label=" + quote(label) + "]") + ";");
    }
  }

  for (const auto& l : top_lines) os << "  " << l << "\n";
  size_t cluster_no = 0;
  auto emit_cluster = [&](const std::string& path, int indent, auto&& self) -> void {
    std::string pad(static_cast<size_t>(indent), ' ');
    const Cluster& c = clusters[path];
    os << pad << "subgraph cluster_" << cluster_no++ << " {\n"
       << pad << "  label=" << quote(path) << "; style=\"rounded,dashed\"; color=\"#888888\"; "
       << "fontcolor=\"#444444\";\n";
    for (const auto& l : c.node_lines) os << pad << "  " << l << "\n";
    for (const auto& child : c.children) self(child, indent + 2, self);
    os << pad << "}\n";
  };
  for (const auto& p : top_children) emit_cluster(p, 2, emit_cluster);

  os << "  out [label=\"output\", shape=ellipse, fillcolor=\"#c9f0c9\"];\n";
  for (const auto& l : edge_lines) os << "  " << l << "\n";
  for (const Value* v : g.outputs()) {
    auto it = producer_id.find(v);
    if (it == producer_id.end()) continue;
    std::string label = edge_label(v);
    os << "  " << it->second << " -> out" << (label.empty() ? "" : " [label=" + quote(label) + "]")
       << ";\n";
  }
  os << "}\n";
  return os.str();
}

std::optional<std::string> find_dot_program() {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string cand = dir + "/dot";
    if (::access(cand.c_str(), X_OK) == 0) return cand;
  }
  return std::nullopt;
}

static std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::optional<std::string> render_svg(const std::string& dot_file) {
  std::optional<std::string> dot = find_dot_program();
  if (!dot) return std::nullopt;
  // The picture is a convenience: a Graphviz that fails or hangs (layout of a huge graph) costs
  // the .svg, never the conversion; the .dot is written either way.
  std::string cmd = shell_quote(*dot) + " -Tsvg " + shell_quote(dot_file) + " 2>/dev/null";
  if (::access("/usr/bin/timeout", X_OK) == 0) cmd = "/usr/bin/timeout 300 " + cmd;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    spdlog::warn("cannot run Graphviz 'dot'; no .svg written (the .dot is)");
    return std::nullopt;
  }
  std::string svg;
  char buf[1 << 14];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) svg.append(buf, n);
  int status = ::pclose(p);
  if (status != 0 || svg.empty()) {
    spdlog::warn(
        "Graphviz 'dot -Tsvg' failed or took over 5 minutes; no .svg written (the .dot "
        "is: render it by hand, e.g. with 'sfdp -Tsvg' for a large graph)");
    return std::nullopt;
  }
  return svg;
}

bool write_dot_outputs(const Graph& g, OutputSet& out, const std::string& dot_filename) {
  std::string tmp = out.stage(dot_filename);
  {
    errno = 0;
    std::ofstream f(tmp, std::ios::binary);
    f << emit_dot(g);
    f.close();
    if (!f) throw output_error(out.final_path(dot_filename), errno);
  }
  if (!find_dot_program()) return false;
  std::string stem = dot_filename;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".dot") == 0)
    stem.resize(stem.size() - 4);
  std::optional<std::string> svg = render_svg(tmp);
  if (!svg) return false;
  out.write_text(stem + ".svg", *svg);
  return true;
}

}  // namespace tt
