// functional-to-module: turn functional activations into nn module calls, so that eager-mode
// quantization (which swaps modules at convert time) can see them (DESIGN.md §5, --quant-prep).
//
// Before:
//   %r : f32[1,8] = F.relu(%x) #scope=block
//   %h : f32[1,8] = F.hardtanh(%r, %zero, %six) #scope=block
//   %p : f32[1,8] = F.prelu(%h, %a)                         // %a = prim.GetAttr @value=block.a
// After:
//   %r : f32[1,8] = nn.ReLU[inplace=false](%x) #module=block.relu #scope=block
//   %h : f32[1,8] = nn.ReLU6[inplace=false](%r) #module=block.relu6 #scope=block
//   %p : f32[1,8] = nn.PReLU[num_parameters=8](%h) @weight=prelu.weight #module=prelu
//
// Rules (matched by the ATen op a node lowers to, never by value or module names):
//   relu -> nn.ReLU, relu6 -> nn.ReLU6, hardtanh(x, 0, 6) -> nn.ReLU6, other constant bounds ->
//   nn.Hardtanh(min_val, max_val), hardswish -> nn.Hardswish, elu(x, alpha) with scale and
//   input_scale 1 -> nn.ELU(alpha), leaky_relu(x, slope) -> nn.LeakyReLU(slope), sigmoid ->
//   nn.Sigmoid, tanh -> nn.Tanh, hardsigmoid -> nn.Hardsigmoid, prelu(x, w) -> nn.PReLU,
//   dropout(x, p, train=false) -> nn.Dropout(p).
// Hyperparameters must be constants (else the node stays; -vvv says why). In-place forms were
// lifted to these functional ops by the loader, so new modules are always inplace=false.
//
// The node is changed in place (same output value, name, position, scope, loc): its op becomes
// the module, its constant arguments become attributes, and it gets a fresh module path under its
// scope (passes/module_paths.h). Constants left without uses are dropped by dce.
//
// PReLU: its weight must be a 1-d parameter/buffer read by prim.GetAttr. The module owns it as
// "<path>.weight": when nothing else refers to the original state_dict entry it is renamed in
// place (same position in the state_dict; the GetAttr goes away), otherwise the module gets a
// copy (appended) and the original stays.
//
// Linear: one walk to count weight references (PReLU only), one walk to rewrite, one weight-store
// rebuild for the renames.
#include "ir/op_table.h"
#include "passes/module_paths.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <optional>
#include <unordered_map>

namespace tt {
namespace {

// The rules are the op table's module rows with a functional form (OpInfo::functional_aten,
// attr_stem, the kInplaceKeyword fact): Note [Op facts].
using Rule = OpInfo;

const Rule* find_rule(const Node* n) {
  if (is_module_op(n) || n->num_outputs() != 1 || n->num_inputs() == 0 || !n->blocks().empty())
    return nullptr;
  for (const Rule* r : functional_module_rows())
    if (calls_aten(n, r->functional_aten)) return r;
  return nullptr;
}

// What the node becomes: op, attributes (constructor order), how many leading inputs stay.
struct Plan {
  std::string op;
  const char* base = "";
  Attrs attrs;
  const Node* prelu_weight = nullptr;  // the GetAttr feeding F.prelu
};

// The check (rejections are named by the rule's attr_stem).
class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g) {}

  Match<Plan> match(const Node* n, const Rule& r) {
    Plan p;
    p.op = r.name;
    p.base = r.attr_stem.c_str();
    std::string a = r.functional_aten;
    auto arg = [&](size_t i) -> const Value* {
      return i < n->num_inputs() ? n->input(i) : nullptr;
    };
    if (a == "aten::hardtanh") {
      auto lo = arg(1) ? const_float(arg(1)) : std::nullopt;
      auto hi = arg(2) ? const_float(arg(2)) : std::nullopt;
      if (n->num_inputs() != 3 || !lo || !hi) return Reject("bounds are not constants");
      if (*lo == 0.0 && *hi == 6.0) {
        p.op = "nn.ReLU6";
        p.base = "relu6";
      } else {
        p.attrs.set("min_val", *lo);
        p.attrs.set("max_val", *hi);
      }
    } else if (a == "aten::elu") {
      auto alpha = arg(1) ? const_float(arg(1)) : std::optional<double>(1.0);
      auto scale = arg(2) ? const_float(arg(2)) : std::optional<double>(1.0);
      auto in_scale = arg(3) ? const_float(arg(3)) : std::optional<double>(1.0);
      if (n->num_inputs() > 4 || !alpha || !scale || !in_scale)
        return Reject("alpha/scale/input_scale are not constants");
      if (*scale != 1.0 || *in_scale != 1.0)
        return Reject("scaled ELU (scale or input_scale != 1)");
      p.attrs.set("alpha", *alpha);
    } else if (a == "aten::leaky_relu") {
      auto slope = arg(1) ? const_float(arg(1)) : std::optional<double>(0.01);
      if (n->num_inputs() > 2 || !slope) return Reject("negative_slope is not a constant");
      p.attrs.set("negative_slope", *slope);
    } else if (a == "aten::dropout") {
      auto prob = arg(1) ? const_float(arg(1)) : std::nullopt;
      auto train = arg(2) ? const_bool(arg(2)) : std::nullopt;
      if (n->num_inputs() != 3 || !prob) return Reject("p is not a constant");
      // nn.Dropout in an eval model is the identity: only a dropout that is off already matches.
      if (!train || *train) return Reject("train is not a constant false");
      p.attrs.set("p", *prob);
    } else if (a == "aten::prelu") {
      if (n->num_inputs() != 2) return Reject("unexpected inputs");
      const Node* get = producer_is(n->input(1), "prim.GetAttr");
      if (!get) return Reject("the weight is not a model parameter (prim.GetAttr)");
      const Weight* w = g_.weights().find(get->weight("value"));
      if (!w || !w->tensor.defined()) return Reject("the weight is not in the weight store");
      if (w->tensor.dim() != 1) return Reject("the weight is not 1-d");
      p.attrs.set("num_parameters", w->tensor.size(0));
      p.prelu_weight = get;
    } else if (n->num_inputs() != 1) {
      return Reject("unexpected inputs");
    }
    if (r.facts & kInplaceKeyword) p.attrs.set("inplace", false);
    return p;
  }

 private:
  const Graph& g_;
};

// How many nodes refer to each weight (GetAttr reads and module weight refs).
std::unordered_map<std::string, size_t> weight_refs(const Graph& g) {
  std::unordered_map<std::string, size_t> refs;
  walk_pre(g.block(), [&](Node* n) {
    for (const auto& kv : n->weights()) ++refs[kv.second];
    return true;
  });
  return refs;
}

}  // namespace

bool run_functional_to_module(Graph& g, PassContext& ctx) {
  Matcher m(g);
  Rewriter rw(ctx);
  std::optional<ModulePaths> paths;  // built on the first match
  std::optional<std::unordered_map<std::string, size_t>> refs;
  std::unordered_map<std::string, std::string> renames;  // PReLU weights moving into modules
  bool changed = false;
  walk_pre(g.block(), [&](Node* n) {
    const Rule* r = find_rule(n);
    if (!r) return true;
    rw.run(r->attr_stem.c_str(), n, m.match(n, *r), [&](const Plan& p) {
      const Plan* plan = &p;
      if (!paths) paths.emplace(g);
      std::string path = paths->fresh(n->scope(), plan->base);
      const char* old_name = r->attr_stem.c_str();
      n->set_op(plan->op);
      if (plan->prelu_weight) {
        if (!refs) refs = weight_refs(g);
        Node* get = const_cast<Node*>(plan->prelu_weight);
        std::string src = get->weight("value");
        std::string dst = path + ".weight";
        // Renaming needs the GetAttr's only use to be this node and no other reference to `src`;
        // renames are applied at the end, in one pass that keeps the state_dict order.
        bool rename = (*refs)[src] == 1 && get->output()->num_uses() == 1;
        if (rename) {
          renames.emplace(src, dst);
          n->set_weight("weight", src);
        } else {
          Weight w = g.weights().at(src);
          w.tensor = w.tensor.clone();
          g.weights().set(dst, std::move(w));
          n->set_weight("weight", dst);
        }
        n->remove_input(1);
        if (rename) get->destroy();
      }
      while (n->num_inputs() > 1) n->remove_input(n->num_inputs() - 1);
      for (const auto& [k, v] : plan->attrs.items()) n->attrs().set(k, v);
      n->set_module(path);
      rw.rewrite(old_name, n);
      changed = true;
    });
    return true;
  });
  rename_weights(g, renames);
  return changed;
}

}  // namespace tt
