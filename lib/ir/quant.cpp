// Eager-mode quantization vocabulary (see quant.h): the composite module table, float-only ops,
// domain rules and the float fallback regions the report lists.
#include "ir/quant.h"

#include "ir/op_table.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tt {

namespace {

const std::map<std::string, std::vector<CompositePart>, std::less<>>& composite_table() {
  static const std::map<std::string, std::vector<CompositePart>, std::less<>> t = [] {
    std::map<std::string, std::vector<CompositePart>, std::less<>> m;
    const CompositePart relu{"nn.ReLU", "relu_"};
    for (const char* d : {"1d", "2d", "3d"}) {
      std::string conv = std::string("nn.Conv") + d, bn = std::string("nn.BatchNorm") + d;
      m[std::string("nni.ConvReLU") + d] = {{conv, ""}, relu};
      m[std::string("nni.ConvBn") + d] = {{conv, ""}, {bn, "bn_"}};
      m[std::string("nni.ConvBnReLU") + d] = {{conv, ""}, {bn, "bn_"}, relu};
    }
    m["nni.LinearReLU"] = {{"nn.Linear", ""}, relu};
    m["nni.LinearBn1d"] = {{"nn.Linear", ""}, {"nn.BatchNorm1d", "bn_"}};
    m["nni.BNReLU2d"] = {{"nn.BatchNorm2d", ""}, relu};
    m["nni.BNReLU3d"] = {{"nn.BatchNorm3d", ""}, relu};
    return m;
  }();
  return t;
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

bool has_tensor_input(const Node* n) {
  for (const Value* v : n->inputs())
    if (v->type().is_tensor()) return true;
  return false;
}

}  // namespace

const std::vector<CompositePart>* composite_parts(std::string_view op) {
  const auto& t = composite_table();
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

Attrs composite_part_attrs(const Node& n, size_t i) {
  Attrs out;
  const auto* parts = composite_parts(n.op());
  if (!parts || i >= parts->size()) return out;
  const std::string& prefix = (*parts)[i].attr_prefix;
  for (const auto& [name, value] : n.attrs().items()) {
    if (!prefix.empty()) {
      if (starts_with(name, prefix)) out.set(name.substr(prefix.size()), value);
      continue;
    }
    bool other = false;  // the first part owns every attribute no later part claims
    for (const auto& p : *parts)
      if (!p.attr_prefix.empty() && starts_with(name, p.attr_prefix)) other = true;
    if (!other) out.set(name, value);
  }
  return out;
}

std::string composite_weight_key(size_t i, const std::string& key) {
  return std::to_string(i) + "." + key;
}

bool may_hold_tensor(const Type& t) {
  using K = Type::Kind;
  return t.kind == K::Tensor || t.kind == K::List || t.kind == K::Tuple || t.kind == K::Optional ||
         t.kind == K::Any;
}

std::string float_only_reason(const Node* n) {
  const std::string& op = n->op();
  if (starts_with(op, "prim.") || starts_with(op, "quant.") || starts_with(op, "nni.") ||
      starts_with(op, "FloatFunctional.") || starts_with(op, "QFunctional."))
    return "";
  if (is_aten_fallback(op)) return has_tensor_input(n) ? op : "";
  const OpInfo* info = find_op(op);
  QuantClass q = info ? info->qclass : QuantClass::Unknown;
  // Quantized clamp (QNNPACK) needs both bounds, as numbers: clamp(x, max=m), clamp_min and
  // clamp(x, tensor, tensor) raise after convert.
  if (info && q == QuantClass::Native && n->num_inputs() >= 1 &&
      (op.find("clamp") != std::string::npos || op.find("clip") != std::string::npos)) {
    if (n->num_inputs() < 3) return op + " (quantized clamp needs both bounds)";
    for (size_t i = 1; i < 3; ++i) {
      const Value* b = n->input(i);
      const AttrValue* c = b->constant();
      bool number =
          c ? !std::holds_alternative<NoneAttr>(*c) && !std::holds_alternative<at::Tensor>(*c)
            : b->type().kind == Type::Kind::Int || b->type().kind == Type::Kind::Float;
      if (!number) return op + " (quantized clamp needs both bounds, as numbers)";
    }
  }
  switch (q) {
    case QuantClass::Float:
      return op;
    // torch.add / torch.mul / torch.cat ... left as functions (not FloatFunctional modules) only
    // run in float: float-functional rewrites the others, float-fallback demotes those that sit
    // inside a float region.
    case QuantClass::FloatFunctional:
      return info->kind != OpKind::Module && has_tensor_input(n) ? op : "";
    case QuantClass::Unknown:
      return has_tensor_input(n) ? op + " (unknown to eager quantization)" : "";
    default:
      return "";
  }
}

DomainRule domain_rule(const Node* n) {
  if (is_quant_stub(n)) return DomainRule::ToQuant;
  if (is_dequant_stub(n)) return DomainRule::ToFloat;
  if (!float_only_reason(n).empty()) return DomainRule::Float;
  const std::string& op = n->op();
  if (starts_with(op, "nni.") || starts_with(op, "FloatFunctional.") ||
      starts_with(op, "QFunctional."))
    return DomainRule::NeedsQuant;
  const OpInfo* info = find_op(op);
  if (info &&
      (info->qclass == QuantClass::NeedsModule || info->qclass == QuantClass::FloatFunctional))
    return DomainRule::NeedsQuant;
  return DomainRule::Keep;
}

std::vector<FloatRegion> float_fallback_regions(const Graph& g) {
  // Region ids of float values (union-find over float-only nodes); -1: float but no region
  // (graph inputs, weights), absent: quantized.
  std::vector<int> parent;
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](int a, int b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  std::unordered_map<const Value*, int> region;  // float-domain values only
  std::set<const Value*> quantized;
  std::vector<const Node*> float_nodes;
  std::vector<int> node_region;

  auto in_region = [&](const Value* v) {
    auto it = region.find(v);
    return it == region.end() ? -1 : it->second;
  };
  std::function<void(const Block*)> walk = [&](const Block* b) {
    for (const Node* n : b->nodes()) {
      DomainRule r = domain_rule(n);
      if (r == DomainRule::Float) {
        int id = static_cast<int>(parent.size());
        parent.push_back(id);
        for (const Value* v : n->inputs())
          if (int j = in_region(v); j >= 0) unite(id, j);
        float_nodes.push_back(n);
        node_region.push_back(id);
        for (const Value* o : n->outputs()) region[o] = id;
      } else if (r == DomainRule::Keep) {
        bool q = false;
        int id = -1;
        for (const Value* v : n->inputs()) {
          if (quantized.count(v) && may_hold_tensor(v->type())) q = true;
          if (int j = in_region(v); j >= 0) id = id < 0 ? j : (unite(id, j), find(id));
        }
        for (const Value* o : n->outputs()) {
          if (q && may_hold_tensor(o->type()))
            quantized.insert(o);
          else if (id >= 0)
            region[o] = id;
        }
      } else if (r == DomainRule::ToQuant || r == DomainRule::NeedsQuant) {
        for (const Value* o : n->outputs()) quantized.insert(o);
      }
      // Nested blocks: loop-carried and branch values keep the domain of what flows in.
      for (const auto& sub : n->blocks()) {
        const auto& params = sub->inputs();
        for (size_t i = 0; i < params.size(); ++i) {
          // prim.Loop: block inputs are (iteration, carried...), node inputs (max, cond, carried...)
          size_t src = i + 1;
          if (n->is("prim.Loop") && i > 0 && src < n->num_inputs()) {
            if (quantized.count(n->input(src)))
              quantized.insert(params[i]);
            else if (int j = in_region(n->input(src)); j >= 0)
              region[params[i]] = j;
          }
        }
        walk(sub.get());
      }
      if (!n->blocks().empty()) {
        const Block* b0 = n->block(0);
        size_t off = n->is("prim.Loop") ? 1 : 0;  // a loop block returns (cond, carried...)
        for (size_t i = 0; i < n->num_outputs() && i + off < b0->outputs().size(); ++i) {
          const Value* src = b0->outputs()[i + off];
          if (quantized.count(src))
            quantized.insert(n->output(i));
          else if (int j = in_region(src); j >= 0)
            region[n->output(i)] = j;
        }
      }
    }
  };
  walk(g.block());

  std::vector<FloatRegion> out;
  std::unordered_map<int, size_t> index;
  for (size_t i = 0; i < float_nodes.size(); ++i) {
    int root = find(node_region[i]);
    auto [it, fresh] = index.emplace(root, out.size());
    if (fresh) out.emplace_back();
    FloatRegion& fr = out[it->second];
    fr.nodes.push_back(float_nodes[i]);
    if (std::find(fr.ops.begin(), fr.ops.end(), float_nodes[i]->op()) == fr.ops.end())
      fr.ops.push_back(float_nodes[i]->op());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Note [State of quantized modules]
// nnqd.LSTM / nnqd.GRU keep packed cells in their eager state_dict, which a dict of tensors
// cannot hold: their weights stay the tensors under nn.LSTM's names (qint8 weights, float biases),
// which the generated code's helper classes pack again on loading (Note [Python helper
// definitions] in lib/ir/py_helpers.h).

std::vector<std::pair<std::string, c10::IValue>> state_dict_items(const Graph& g) {
  // Quantized convolutions and linear layers without a bias: `bias: None` after their weight.
  std::unordered_map<std::string, std::string> none_bias_after;  // weight name -> bias name
  for (const Node* n : g.all_nodes()) {
    bool conv = starts_with(n->op(), "nnq.Conv") || starts_with(n->op(), "nniq.ConvReLU");
    bool linear = n->is("nnq.Linear") || n->is("nniq.LinearReLU") || n->is("nnqd.Linear");
    if ((!conv && !linear) || n->module().empty() || n->weight("weight").empty() ||
        !n->weight("bias").empty())
      continue;
    none_bias_after.emplace(n->weight("weight"), n->module() + ".bias");
  }
  std::vector<std::pair<std::string, c10::IValue>> out;
  for (const std::string& name : g.weights().names()) {
    out.emplace_back(name, g.weights().at(name).tensor);
    auto it = none_bias_after.find(name);
    if (it != none_bias_after.end()) out.emplace_back(it->second, c10::IValue());
  }
  return out;
}

}  // namespace tt
