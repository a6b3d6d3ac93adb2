// The .tir printer (DESIGN.md §4): one node per line, deterministic, and canonical, so that
// print_graph(parse_tir(t)) == t; then the module table and the weights, each a section of its
// own. The parser (lib/loaders/tir_parser.cpp) is its inverse.
#include "ir/printer.h"

#include "ir/tir_text.h"
#include "support/diag.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tt {

// ---------------------------------------------------------------------------------------------
// helpers shared with the parser (declared in tir_text.h)

bool tir_is_bare_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!tir_is_name_char(c)) return false;
  return true;
}

std::string tir_name_or_quoted(const std::string& s) {
  return tir_is_bare_name(s) ? s : attr_str(AttrValue(s));
}

// Shortest decimal that reads back (with strtof) as the same float. Kept separate from the
// double formatting of attr_str so f32 weights print as "0.1", not "0.10000000149011612".
std::string tir_format_f32(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string tir_tensor_values(const at::Tensor& t, const std::string& sep) {
  at::Tensor flat = t.detach().contiguous().reshape({-1}).cpu();
  const at::ScalarType st = flat.scalar_type();
  if (at::isComplexType(st) || at::isQIntType(st))
    throw Error(ExitCode::Unsupported,
                std::string("cannot write a ") + c10::toString(st) +
                    " tensor inline in .tir — print the weights as declarations or external()");
  std::string s = "[";
  const int64_t n = flat.numel();
  if (st == at::kDouble) {
    const double* p = flat.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) s += (i ? sep : "") + attr_str(AttrValue(p[i]));
  } else if (at::isFloatingType(st)) {
    at::Tensor f = flat.to(at::kFloat);
    const float* p = f.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) s += (i ? sep : "") + tir_format_f32(p[i]);
  } else if (st == at::kBool) {
    const bool* p = flat.data_ptr<bool>();
    for (int64_t i = 0; i < n; ++i) s += (i ? sep : "") + std::string(p[i] ? "true" : "false");
  } else {
    at::Tensor l = flat.to(at::kLong);
    const int64_t* p = l.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) s += (i ? sep : "") + std::to_string(p[i]);
  }
  return s + "]";
}

Type tir_tensor_type(const at::Tensor& t) {
  if (!t.defined()) return Type::tensor();
  return Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())),
                      std::vector<int64_t>(t.sizes().begin(), t.sizes().end()));
}

// ---------------------------------------------------------------------------------------------
// printer

namespace {

// The printer appends to one std::string (no stream per node or per line; issue #22: the
// 1M-node graph of scripts/bench_passes.sh prints 100 MB).
void print_value_decl(std::string& os, const Value* v) {
  os += '%';
  os += v->name();
  os += " : ";
  os += v->type().str();
}

void print_value_list(std::string& os, const std::vector<Value*>& vs) {
  for (size_t i = 0; i < vs.size(); ++i) {
    if (i) os += ", ";
    os += '%';
    os += vs[i]->name();
  }
}

void print_node_at(std::string& os, const Node& n, int indent);

void print_block_body(std::string& os, const Block& b, int indent) {
  const size_t pad = static_cast<size_t>(indent) * 2;
  for (Node* n = b.front(); n; n = n->next()) {
    os.append(pad, ' ');
    print_node_at(os, *n, indent);
    os += '\n';
  }
  os.append(pad, ' ');
  os += "return";
  if (!b.outputs().empty()) {
    os += ' ';
    print_value_list(os, b.outputs());
  }
  os += '\n';
}

// Appends a name bare or quoted (tir_name_or_quoted) without a temporary for the bare case.
void print_name(std::string& os, const std::string& s) {
  if (tir_is_bare_name(s))
    os += s;
  else
    os += attr_str(AttrValue(s));
}

// Prints the node starting at the current column (the caller wrote the indentation); nested
// blocks are indented relative to `indent`. No trailing newline.
void print_node_at(std::string& os, const Node& n, int indent) {
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    if (i) os += ", ";
    print_value_decl(os, n.output(i));
  }
  if (n.num_outputs()) os += " = ";
  os += n.op();
  if (!n.attrs().empty()) {
    os += '[';
    bool first = true;
    for (const auto& kv : n.attrs().items()) {
      if (!first) os += ", ";
      first = false;
      os += kv.first;
      os += '=';
      os += attr_str(kv.second);
    }
    os += ']';
  }
  os += '(';
  print_value_list(os, n.inputs());
  os += ')';
  for (const auto& kv : n.weights()) {
    os += " @";
    os += kv.first;
    os += '=';
    print_name(os, kv.second);
  }
  if (!n.module().empty()) {
    os += " #module=";
    print_name(os, n.module());
  }
  if (!n.scope().empty()) {
    os += " #scope=";
    print_name(os, n.scope());
  }
  if (!n.loc().empty()) {
    os += " #loc=";
    os += attr_str(AttrValue(n.loc()));
  }
  if (n.blocks().empty()) return;
  os += " {\n";
  const size_t pad = static_cast<size_t>(indent + 1) * 2;
  for (size_t bi = 0; bi < n.blocks().size(); ++bi) {
    const Block& b = *n.block(bi);
    os.append(pad, ' ');
    os += "block";
    os += std::to_string(bi);
    os += '(';
    for (size_t i = 0; i < b.inputs().size(); ++i) {
      if (i) os += ", ";
      print_value_decl(os, b.inputs()[i]);
    }
    os += ") {\n";
    print_block_body(os, b, indent + 2);
    os.append(pad, ' ');
    os += "}\n";
  }
  os.append(static_cast<size_t>(indent) * 2, ' ');
  os += '}';
}

// Note [Modules in .tir]
// The module table (Note [Module table] in ir.h) is a section after the graph and before the
// weights, only when the table is not empty; one line per module path, in path order:
//   modules {
//     "" : "torchvision.models.resnet.ResNet"(x)
//     layer1 : "torch.nn.modules.container.Sequential"
//     layer1.0 : "torchvision.models.resnet.BasicBlock"(x)
//   }
// The path is written like #module= (bare when it is a dotted name, else quoted; the root is
// ""), the class always as a string, and the forward's argument names in parentheses when the
// table knows them (no parentheses: none known).
void print_modules(std::string& os, const Graph& g) {
  if (g.modules().empty()) return;
  os += "modules {\n";
  for (const auto& [path, info] : g.modules()) {
    os += "  ";
    print_name(os, path);
    os += " : ";
    os += attr_str(AttrValue(info.type));
    if (!info.forward_args.empty()) {
      os += '(';
      for (size_t i = 0; i < info.forward_args.size(); ++i) {
        if (i) os += ", ";
        print_name(os, info.forward_args[i]);
      }
      os += ')';
    }
    os += '\n';
  }
  os += "}\n";
}

}  // namespace

std::string print_node(const Node& n) {
  std::string os;
  print_node_at(os, n, 0);
  return os;
}

std::string print_graph(const Graph& g, const PrintOptions& opts) {
  std::string os;
  // About 100 bytes a line: one allocation for most graphs instead of a doubling series.
  os.reserve(g.num_nodes() * 100 + 4096);
  os += "graph ";
  if (!g.name().empty()) {
    os += '@';
    print_name(os, g.name());
  }
  os += '(';
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (i) os += ", ";
    print_value_decl(os, g.inputs()[i]);
    if (const AttrValue* d = g.input_default(g.inputs()[i])) {  // Note [Forward defaults]
      os += " = ";
      os += attr_str(*d);
    }
  }
  os += ") {\n";
  print_block_body(os, *g.block(), 1);
  os += "}\n";
  print_modules(os, g);

  const WeightStore& ws = g.weights();
  if (!opts.print_weights_section || ws.size() == 0) return os;
  os += "weights {\n";
  for (const std::string& name : ws.names()) {
    const Weight& w = ws.at(name);
    os += "  ";
    print_name(os, name);
    os += " : ";
    os += tir_tensor_type(w.tensor).str();
    os += w.is_param ? " param" : " buffer";
    switch (opts.weights) {
      case PrintOptions::Weights::Declare:
        break;
      case PrintOptions::Weights::Inline:
        if (w.tensor.defined()) {
          os += " = ";
          os += tir_tensor_values(w.tensor, ", ");
        }
        break;
      case PrintOptions::Weights::External:
        os += " = external(";
        os += attr_str(AttrValue(opts.weights_file));
        os += ')';
        break;
    }
    os += '\n';
  }
  os += "}\n";
  return os;
}

}  // namespace tt
