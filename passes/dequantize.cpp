// dequantize: turn an int8 (eager-mode quantized) graph into its float twin (--dequantize).
//
// Note [Dequantize]
// Every quantized module of the graph (Note [Quantized modules] in
// lib/loaders/torchscript/lifter_quantized.cpp) becomes the float module it was converted from,
// with the int8 weight dequantized (weight.dequantize(): (q - zero_point) * scale, per tensor or
// per channel) and its output scale / zero point dropped:
//   nnq.Quantize, nnq.DeQuantize, nnq.Dropout -> removed (their input is used instead)
//   nnq.Conv{1,2,3}d                          -> nn.Conv{1,2,3}d
//   nnq.ConvTranspose{1,2}d                   -> nn.ConvTranspose{1,2}d
//   nniq.ConvReLU{1,2,3}d                     -> nn.Conv{1,2,3}d + nn.ReLU (a fresh module path)
//   nnq.Linear, nnqd.Linear                   -> nn.Linear
//   nniq.LinearReLU                           -> nn.Linear + nn.ReLU
//   QFunctional.add / mul / cat               -> torch.add / torch.mul / torch.cat
//   QFunctional.add_relu                      -> torch.add + F.relu
//   QFunctional.add_scalar / mul_scalar       -> torch.add / torch.mul with the number
// The float twin is not bit-exact with the int8 model: it computes what the int8 model
// approximates, without the rounding of every activation to 8 bits (--verify compares the outputs
// by cosine similarity, Note [Verifying a dequantized model] in lib/driver/convert.cpp). Any other
// quantized op (nnq.BatchNorm2d, nnq.Hardswish, quantized::* calls of modules lifted through
// their forward, quantize_per_tensor, ...) and any quantized weight left over is refused (exit 4)
// rather than left int8 in a model that claims to be float.
//
// Before:
//   %q : Tensor = nnq.Quantize[scale=0.1, zero_point=0, dtype=torch.quint8](%x) @scale=quant.scale
//     @zero_point=quant.zero_point #module=quant
//   %c : Tensor = nniq.ConvReLU2d[in_channels=3, ...](%q) @weight=conv.weight @bias=conv.bias
//     @scale=conv.scale @zero_point=conv.zero_point #module=conv
//   %y : Tensor = nnq.DeQuantize(%c) #module=dequant
// After:
//   %c : Tensor = nn.Conv2d[in_channels=3, ...](%x) @weight=conv.weight @bias=conv.bias
//     #module=conv
//   %r : Tensor = nn.ReLU(%c) #module=relu
// (conv.weight is now float32; quant.scale, conv.scale, ... left the state_dict)
#include "ir/quant.h"
#include "passes/module_paths.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <ATen/ATen.h>

#include <optional>

namespace tt {
namespace {

bool is_quantized_dtype(DType d) { return d == DType::QI8 || d == DType::QU8 || d == DType::QI32; }

// The type of `v` with float32 in place of a quantized dtype.
Type float_type(const Value* v) {
  Type t = v->type();
  if (t.is_tensor() && is_quantized_dtype(t.dtype)) t.dtype = DType::F32;
  return t;
}

// What a quantized op becomes.
struct Plan {
  enum Kind { Remove, Module, Functional } kind;
  std::string op;     // nn.Conv2d / torch.add
  bool relu = false;  // followed by a ReLU (nn.ReLU after a module, F.relu after a function)
};

std::optional<Plan> plan_for(const std::string& op) {
  if (op == "nnq.Quantize" || op == "nnq.DeQuantize" || op == "nnq.Dropout")
    return Plan{Plan::Remove, ""};
  for (const char* d : {"1d", "2d", "3d"}) {
    if (op == std::string("nnq.Conv") + d) return Plan{Plan::Module, std::string("nn.Conv") + d};
    if (op == std::string("nnq.ConvTranspose") + d)
      return Plan{Plan::Module, std::string("nn.ConvTranspose") + d};
    if (op == std::string("nniq.ConvReLU") + d)
      return Plan{Plan::Module, std::string("nn.Conv") + d, true};
  }
  if (op == "nnq.Linear" || op == "nnqd.Linear") return Plan{Plan::Module, "nn.Linear"};
  if (op == "nniq.LinearReLU") return Plan{Plan::Module, "nn.Linear", true};
  if (op == "QFunctional.add" || op == "QFunctional.add_scalar")
    return Plan{Plan::Functional, "torch.add"};
  if (op == "QFunctional.add_relu") return Plan{Plan::Functional, "torch.add", true};
  if (op == "QFunctional.mul" || op == "QFunctional.mul_scalar")
    return Plan{Plan::Functional, "torch.mul"};
  if (op == "QFunctional.cat") return Plan{Plan::Functional, "torch.cat"};
  return std::nullopt;
}

// Why `n` is a quantized op this pass cannot turn into float ("" when it is not quantized).
std::string unhandled_quantized(const Node* n) {
  if (is_int8_module_op(n->op())) return "the quantized module op " + n->op();
  if (n->op().find("quantized") != std::string::npos) return "the quantized op " + n->op();
  for (const char* a :
       {"aten::quantize_per_tensor", "aten::quantize_per_channel", "aten::dequantize",
        "aten::q_scale", "aten::q_zero_point", "aten::int_repr", "aten::q_per_channel_scales",
        "aten::q_per_channel_zero_points", "aten::fake_quantize_per_tensor_affine"})
    if (calls_aten(n, a)) return std::string("the quantization op ") + a;
  return "";
}

class Dequantizer {
 public:
  Dequantizer(Graph& g, PassContext& ctx) : g_(g), rw_(ctx), paths_(g) {}

  bool run() {
    bool changed = false;
    walk_pre(g_.block(), [&](Node* n) {
      auto plan = plan_for(n->op());
      if (!plan) return true;
      rw_.rewrite(plan->kind == Plan::Remove   ? "remove"
                  : plan->kind == Plan::Module ? "module"
                                               : "qfunctional",
                  n);
      apply(n, *plan);  // may destroy n
      changed = true;
      return true;
    });
    g_.weights().apply(std::move(edits_));
    refuse_leftovers();
    // Values that held quantized tensors hold float ones now.
    for (Value* v : g_.inputs()) v->set_type(float_type(v));
    for (Node* n : g_.all_nodes()) {
      for (Value* v : n->outputs()) v->set_type(float_type(v));
      for (const auto& b : n->blocks())
        for (Value* v : b->inputs()) v->set_type(float_type(v));
    }
    return changed;
  }

 private:
  void drop_weight(Node* n, const std::string& key) {
    std::string name = n->weight(key);
    if (name.empty()) return;
    n->erase_weight(key);
    edits_.erase.insert(name);
  }

  void apply(Node* n, const Plan& p) {
    drop_weight(n, "scale");
    drop_weight(n, "zero_point");
    if (p.kind == Plan::Remove) {
      n->output()->replace_all_uses_with(n->input(0));
      n->destroy();
      return;
    }
    if (p.kind == Plan::Module) {
      // The float module's weight and bias are parameters (the int8 module keeps them packed).
      for (const char* key : {"weight", "bias"})
        if (Weight* wt = g_.weights().find(n->weight(key))) {
          if (wt->tensor.defined() && wt->tensor.is_quantized())
            wt->tensor = wt->tensor.dequantize().contiguous();
          wt->is_param = true;
        }
      Attrs& a = n->attrs();
      if (a.has("bias_")) {  // nnq.Linear's constructor keyword
        bool bias = a.get_bool("bias_", true);
        a.erase("bias_");
        a.set("bias", bias);
      }
      a.erase("dtype");
      n->set_op(p.op);
      if (p.relu) {
        Node* r = g_.create("nn.ReLU", {n->output()}, 0);
        r->add_output(float_type(n->output()));
        r->insert_after(n);
        n->output()->replace_all_uses_with(r->output());
        r->replace_input(0, n->output());
        r->set_module(paths_.fresh(n->scope(), "relu"));
        r->set_scope(n->scope());
        r->set_loc(n->loc());
      }
      return;
    }
    // QFunctional methods: plain torch ops on the same inputs.
    Node* f = g_.create(p.op, {}, 0);
    for (Value* v : n->inputs()) f->add_input(v);
    // QFunctional.cat's dim=None means 0.
    if (p.op == "torch.cat" && f->num_inputs() == 2 && f->input(1)->is_none_constant())
      f->replace_input(1, g_.constant(int64_t{0}, Type::of(Type::Kind::Int), n));
    Value* old = n->output();
    const std::string name = old->name();
    f->add_output(float_type(old));
    f->insert_before(n);
    f->set_scope(n->scope());
    f->set_loc(n->loc());
    Value* out = f->output();
    if (p.relu) {
      Node* r = g_.create("F.relu", {out}, 0);
      r->add_output(float_type(old));
      r->insert_before(n);
      r->set_scope(n->scope());
      r->set_loc(n->loc());
      out = r->output();
    }
    n->output()->replace_all_uses_with(out);
    n->destroy();
    if (!name.empty()) out->set_name(name);  // the QFunctional result's name, free now
  }

  void refuse_leftovers() {
    for (const Node* n : g_.all_nodes()) {
      std::string why = unhandled_quantized(n);
      if (why.empty()) continue;
      throw Error(ExitCode::Unsupported,
                  "--dequantize: " + describe(*n) + ": " + why +
                      " has no float twin in tinytrace yet (handled: Quantize/DeQuantize, "
                      "Conv{1,2,3}d, ConvReLU, Linear, LinearReLU, dynamic Linear, QFunctional) — "
                      "convert without --dequantize to keep the int8 model")
          .at(location_of(*n));
    }
    for (const std::string& name : g_.weights().names())
      if (g_.weights().at(name).tensor.defined() && g_.weights().at(name).tensor.is_quantized())
        throw Error(ExitCode::Unsupported,
                    "--dequantize: the weight '" + name +
                        "' is still a quantized tensor after dequantizing every module "
                        "tinytrace knows — convert without --dequantize to keep the int8 model");
  }

  Graph& g_;
  Rewriter rw_;
  ModulePaths paths_;
  WeightEdits edits_;
};

}  // namespace

bool run_dequantize(Graph& g, PassContext& ctx) { return Dequantizer(g, ctx).run(); }

}  // namespace tt
