// Structural matchers shared by the passes (see pass_util.h).
#include "passes/pass_util.h"

#include "exec/alias.h"
#include "ir/op_table.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace tt {
namespace {

std::string short_name(const std::string& base) {
  size_t p = base.find("::");
  return p == std::string::npos ? base : base.substr(p + 2);
}

}  // namespace

bool has_side_effects(const Node* n) {
  const std::string& op = n->op();
  if (op.rfind("prim.", 0) == 0) return !op_has(*n, kPureOp);
  if (is_module_op(n)) return false;
  if (n->num_outputs() == 0) return true;
  if (!written_inputs(*n).empty()) return true;  // in-place and out= ops (Note [In-place writes])
  if (uses_generator(n)) return true;            // an unused draw still moves the generator on
  for (const auto& b : aten_bases(op)) {
    std::string s = short_name(b);
    if (is_inplace_name(s) || aten_has(s, kMutatesByName)) return true;
  }
  // An op no table knows, spelled as a method/function with a trailing '_' ("Tensor.add_").
  // Python's operator module spells keywords so (operator.is_, not_, and_, or_): never a write.
  auto dot = op.rfind('.');
  std::string last = dot == std::string::npos ? op : op.substr(dot + 1);
  if (op.rfind("aten::", 0) != 0 && op.rfind("operator.", 0) != 0 && is_inplace_name(last))
    return true;
  return false;
}

bool uses_generator(const Node* n) {
  for (const Value* v : n->inputs())
    if (v->type().kind == Type::Kind::Generator) return true;
  return false;
}

bool has_side_effects_deep(const Node* n) {
  if (has_side_effects(n)) return true;
  for (const auto& b : n->blocks())
    if (any_node(b.get(), has_side_effects)) return true;
  return false;
}

bool is_nondeterministic(const Node* n) {
  if (is_module_op(n)) {
    const std::string& op = n->op();
    bool random_in_training =
        op.find("Dropout") != std::string::npos || op.find("RReLU") != std::string::npos;
    return random_in_training && n->attrs().get_bool("training", false);
  }
  for (const auto& b : aten_bases(n->op())) {
    std::string s = short_name(b);
    if (aten_has(s, kRandom)) return true;
    // Reads autograd's mode, which torch.set_grad_enabled changes (Note [with statements]).
    if (s == "is_grad_enabled") return true;
    // Read the machine or process it runs in: never folded to the converting one's answer.
    if (s == "_get_cpu_capability" || s == "get_autocast_dtype") return true;
    if (s == "dropout" || s == "feature_dropout" || s == "alpha_dropout" ||
        s == "feature_alpha_dropout") {
      // (input, p, train): deterministic only when train is a constant false.
      auto train = n->num_inputs() > 2 ? const_bool(n->input(2)) : std::nullopt;
      return !(train && !*train);
    }
    if (s == "scaled_dot_product_attention") {
      // (q, k, v, attn_mask, dropout_p, ...): deterministic only when dropout_p is a constant 0.
      const AttrValue* p = n->num_inputs() > 4 ? n->input(4)->constant() : nullptr;
      if (n->num_inputs() <= 4) return false;
      const double* d = p ? std::get_if<double>(p) : nullptr;
      return !(d && *d == 0.0);
    }
    if (s == "rrelu") {
      auto train = n->num_inputs() > 3 ? const_bool(n->input(3)) : std::optional<bool>(false);
      return !(train && !*train);
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------

const std::optional<std::vector<int64_t>>& shape_of(const Value* v) {
  static const std::optional<std::vector<int64_t>> unknown;
  return v->type().is_tensor() ? v->type().shape : unknown;
}

bool has_complete_shape(const Value* v) {
  const auto& s = shape_of(v);
  return s && std::all_of(s->begin(), s->end(), [](int64_t d) { return d >= 0; });
}

std::optional<size_t> rank_of(const Value* v) {
  if (const auto& s = shape_of(v)) return s->size();
  const Node* p = v->node();
  if (!p || p->num_outputs() != 1) return std::nullopt;
  if (p->is("nn.Flatten")) {
    if (p->attrs().get_int("start_dim", 1) == 1 && p->attrs().get_int("end_dim", -1) == -1)
      return 2;
    return std::nullopt;
  }
  if (calls_aten(p, "aten::flatten") && p->num_inputs() == 3) {
    auto a = const_int(p->input(1));
    auto b = const_int(p->input(2));
    if (a && b && *a == 1 && *b == -1) return 2;
    return std::nullopt;
  }
  if ((calls_aten(p, "aten::view") || calls_aten(p, "aten::reshape")) && p->num_inputs() == 2) {
    const Value* size = p->input(1);
    if (const AttrValue* c = size->constant())
      if (const auto* l = std::get_if<std::vector<int64_t>>(c)) return l->size();
    if (size->node() && size->node()->is("prim.ListConstruct")) return size->node()->num_inputs();
  }
  return std::nullopt;
}

void rename_weights(Graph& g, const std::unordered_map<std::string, std::string>& renames) {
  if (renames.empty()) return;
  WeightEdits edits;
  edits.rename = renames;
  g.weights().apply(std::move(edits));
  walk_pre(g.block(), [&](Node* n) {
    for (size_t i = 0; i < n->weights().size(); ++i) {
      const auto& kv = n->weights()[i];
      auto it = renames.find(kv.second);
      if (it != renames.end()) n->set_weight(std::string(kv.first), it->second);
    }
    return true;
  });
}

}  // namespace tt
