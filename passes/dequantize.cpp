// dequantize: turn an int8 (eager-mode quantized) graph into its float twin (--dequantize).
//
// Note [Dequantize]
// Every quantized module of the graph (Note [Quantized modules] in
// lib/loaders/torchscript/lifter_quantized.cpp) becomes the float module it was converted from,
// with the int8 weight dequantized (weight.dequantize(): (q - zero_point) * scale, per tensor or
// per channel) and its output scale / zero point dropped (the rows: Note [Float twins] below):
//   nnq.Quantize, nnq.DeQuantize, nnq.Dropout,
//   aten::quantize_per_tensor, aten::dequantize  -> removed (their input is used instead)
//   nnq.Conv*, nnq.ConvTranspose*, nnq.Linear, nnqd.Linear, nnq.BatchNorm*, nnq.Hardswish,
//   nnq.ELU, nnq.LeakyReLU, nnq.Sigmoid, nnq.ReLU6, nnq.Softmax,
//   nnq.Embedding, nnq.EmbeddingBag, nnqd.LSTM, nnqd.GRU -> the nn.* module of that name
//   nniq.ConvReLU*, nniq.LinearReLU, nniq.BNReLU*  -> the nn.* module + nn.ReLU (a fresh path)
//   QFunctional.add / mul / cat / add_scalar / mul_scalar -> torch.add / torch.mul / torch.cat
//   QFunctional.add_relu                          -> torch.add + F.relu
//   quantized::add, add_relu, mul, cat, hardswish, elu, ... (calls a trace kept)
//                                                 -> their float op, without scale / zero point
// Ops of ATen on quantized tensors (flatten, max_pool2d, mean, slicing) compute the same in
// float: only their values' types change. The module table (Note [Module table]) follows: a
// twin's path names the float class, the int8 classes that left have no entry, so neither the
// report nor the generated class names keep an int8 class.
// The float twin is not bit-exact with the int8 model: it computes what the int8 model
// approximates, without the rounding of every activation to 8 bits (--verify compares the outputs
// by cosine similarity, Note [Verifying a dequantized model] in lib/driver/convert.cpp). Any other
// quantized op (quantized::conv2d of a module lifted through its forward, quantized::layer_norm,
// aten::q_scale, int_repr, ...) and any quantized weight left over is refused (exit 4) rather
// than left int8 in a model that claims to be float.
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

#include <map>
#include <optional>
#include <vector>

namespace tt {
namespace {

// A class of torch.ao.nn.quantized, .intrinsic.quantized, .quantized.dynamic (or their torch.nn
// spellings of torch 1.x).
bool is_int8_class(const std::string& type) {
  for (const char* ns : {"torch.ao.nn.quantized.", "torch.ao.nn.intrinsic.quantized.",
                         "torch.nn.quantized.", "torch.nn.intrinsic.quantized."})
    if (type.rfind(ns, 0) == 0) return true;
  return false;
}

bool is_quantized_dtype(DType d) { return d == DType::QI8 || d == DType::QU8 || d == DType::QI32; }

// The type of `v` with float32 in place of a quantized dtype.
Type float_type(const Value* v) {
  Type t = v->type();
  if (t.is_tensor() && is_quantized_dtype(t.dtype)) t.dtype = DType::F32;
  return t;
}

// What a quantized op becomes: one row of module_twins() or functional_twins().
struct Plan {
  enum Kind { Remove, Module, Functional } kind;
  std::string op;     // nn.Conv2d / torch.add
  bool relu = false;  // followed by a ReLU (nn.ReLU after a module, F.relu after a function)
  // Module: the float module's class, for the module table ("torch.nn.modules.conv.Conv2d").
  std::string cls;
  // Functional: which inputs of the quantized op the float op takes, in its order (the output
  // scale and zero point are left out); empty: all of them.
  std::vector<int> args;
};

// Note [Float twins]
// The quantized module ops and their float twins, one row each: the int8 module, the float
// module it was converted from (in torch.nn.modules.<file>) and whether a fused ReLU follows.
// Their keywords are the float module's plus the output scale / zero point (and dtype), which
// the twin drops; their weights are the float module's (dequantized) plus scale / zero_point.
struct ModuleTwin {
  const char* int8;
  const char* twin;  // "Conv2d": nn.Conv2d, torch.nn.modules.<file>.Conv2d
  const char* file;
  bool relu;
};
const std::vector<ModuleTwin>& module_twins() {
  static const std::vector<ModuleTwin> rows = {
      {"nnq.Conv1d", "Conv1d", "conv", false},
      {"nnq.Conv2d", "Conv2d", "conv", false},
      {"nnq.Conv3d", "Conv3d", "conv", false},
      {"nniq.ConvReLU1d", "Conv1d", "conv", true},
      {"nniq.ConvReLU2d", "Conv2d", "conv", true},
      {"nniq.ConvReLU3d", "Conv3d", "conv", true},
      {"nnq.ConvTranspose1d", "ConvTranspose1d", "conv", false},
      {"nnq.ConvTranspose2d", "ConvTranspose2d", "conv", false},
      {"nnq.ConvTranspose3d", "ConvTranspose3d", "conv", false},
      {"nnq.Linear", "Linear", "linear", false},
      {"nnqd.Linear", "Linear", "linear", false},
      {"nniq.LinearReLU", "Linear", "linear", true},
      {"nnq.BatchNorm2d", "BatchNorm2d", "batchnorm", false},
      {"nnq.BatchNorm3d", "BatchNorm3d", "batchnorm", false},
      {"nniq.BNReLU2d", "BatchNorm2d", "batchnorm", true},
      {"nniq.BNReLU3d", "BatchNorm3d", "batchnorm", true},
      {"nnq.Hardswish", "Hardswish", "activation", false},
      {"nnq.ELU", "ELU", "activation", false},
      {"nnq.LeakyReLU", "LeakyReLU", "activation", false},
      {"nnq.Sigmoid", "Sigmoid", "activation", false},
      {"nnq.ReLU6", "ReLU6", "activation", false},
      {"nnq.Softmax", "Softmax", "activation", false},
      {"nnq.Embedding", "Embedding", "sparse", false},
      {"nnq.EmbeddingBag", "EmbeddingBag", "sparse", false},
      {"nnqd.LSTM", "LSTM", "rnn", false},
      {"nnqd.GRU", "GRU", "rnn", false},
  };
  return rows;
}

// QFunctional's methods (Note [Quantized modules]) and the quantized::* ops a trace keeps as
// calls (a traced QFunctional.add_scalar, a quantized op called from a forward): the float op and
// the inputs it takes (-1: None). The quantized ops take the output scale and zero point after
// their operands; the float ops do not.
struct FunctionalTwin {
  const char* int8;
  const char* twin;
  bool relu;
  std::vector<int> args;
};
const std::vector<FunctionalTwin>& functional_twins() {
  static const std::vector<FunctionalTwin> rows = {
      {"QFunctional.add", "torch.add", false, {}},
      {"QFunctional.add_scalar", "torch.add", false, {}},
      {"QFunctional.add_relu", "torch.add", true, {}},
      {"QFunctional.mul", "torch.mul", false, {}},
      {"QFunctional.mul_scalar", "torch.mul", false, {}},
      {"QFunctional.cat", "torch.cat", false, {}},
      // quantized::add(Tensor qa, Tensor qb, float scale, int zero_point), ...
      {"quantized::add", "torch.add", false, {0, 1}},
      {"quantized::add_relu", "torch.add", true, {0, 1}},
      {"quantized::add_scalar", "torch.add", false, {0, 1}},
      {"quantized::add_scalar_relu", "torch.add", true, {0, 1}},
      {"quantized::mul", "torch.mul", false, {0, 1}},
      {"quantized::mul_relu", "torch.mul", true, {0, 1}},
      {"quantized::mul_scalar", "torch.mul", false, {0, 1}},
      {"quantized::mul_scalar_relu", "torch.mul", true, {0, 1}},
      // quantized::cat(Tensor[] qx, int dim, float? scale, int? zero_point)
      {"quantized::cat", "torch.cat", false, {0, 1}},
      {"quantized::cat_relu", "torch.cat", true, {0, 1}},
      // quantized::hardswish(Tensor qx, float output_scale, int output_zero_point)
      {"quantized::hardswish", "F.hardswish", false, {0}},
      {"quantized::sigmoid", "torch.sigmoid", false, {0}},
      // quantized::relu6(Tensor qx, bool inplace)
      {"quantized::relu6", "F.relu6", false, {0}},
      // quantized::leaky_relu(Tensor qx, Scalar negative_slope, bool inplace, float output_scale,
      // int output_zero_point)
      {"quantized::leaky_relu", "F.leaky_relu", false, {0, 1}},
      // quantized::elu(Tensor self, float output_scale, int output_zero_point, Scalar alpha,
      // Scalar scale, Scalar input_scale) -> aten::elu(self, alpha, scale, input_scale)
      {"quantized::elu", "F.elu", false, {0, 3, 4, 5}},
      // quantized::softmax(Tensor qx, int dim, float output_scale, int output_zero_point)
      {"quantized::softmax", "F.softmax", false, {0, 1, -1}},
  };
  return rows;
}

// The quantization ops that only move between float and quantized tensors: without quantized
// tensors they are the identity (their first input).
bool is_quantize_boundary(const Node* n) {
  return calls_aten(n, "aten::quantize_per_tensor") || calls_aten(n, "aten::dequantize");
}

// The quantized op name of `n` without its overload ("quantized::add.Scalar" -> quantized::add).
std::string base_op(const Node* n) {
  const std::string& op = n->op();
  if (op.rfind("quantized::", 0) != 0) return op;
  return op.substr(0, op.find('.'));
}

std::optional<Plan> plan_for(const Node* n) {
  const std::string& op = n->op();
  if (op == "nnq.Quantize" || op == "nnq.DeQuantize" || op == "nnq.Dropout" ||
      is_quantize_boundary(n))
    return Plan{Plan::Remove, ""};
  for (const ModuleTwin& t : module_twins())
    if (op == t.int8)
      return Plan{Plan::Module, std::string("nn.") + t.twin, t.relu,
                  std::string("torch.nn.modules.") + t.file + "." + t.twin};
  const std::string base = base_op(n);
  for (const FunctionalTwin& t : functional_twins()) {
    if (base != t.int8) continue;
    for (int i : t.args)
      if (i >= 0 && static_cast<size_t>(i) >= n->num_inputs()) return std::nullopt;  // refused
    return Plan{Plan::Functional, t.twin, t.relu, "", t.args};
  }
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
      auto plan = plan_for(n);
      if (!plan) return true;
      rw_.rewrite(plan->kind == Plan::Remove   ? "remove"
                  : plan->kind == Plan::Module ? "module"
                                               : "qfunctional",
                  n);
      bool kept = plan->kind == Plan::Module;
      apply(n, *plan);  // destroys n unless it becomes the float module
      changed = true;
      return kept;  // a destroyed node has no blocks left to walk (ASan: use after free)
    });
    g_.weights().apply(std::move(edits_));
    refuse_leftovers();
    rename_classes();
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
      // The float module's weights and biases are parameters (the int8 module keeps them packed):
      // `weight`/`bias`, and an RNN's `weight_ih_l0`, `bias_hh_l1_reverse`, ... (nnqd.LSTM/GRU
      // hold them under nn.LSTM's names). Other tensors (a BatchNorm's running stats) stay buffers.
      for (const auto& [key, name] : n->weights())
        if (Weight* wt = g_.weights().find(name)) {
          if (wt->tensor.defined() && wt->tensor.is_quantized())
            wt->tensor = wt->tensor.dequantize().contiguous();
          if (key == "weight" || key == "bias" || key.rfind("weight_", 0) == 0 ||
              key.rfind("bias_", 0) == 0)
            wt->is_param = true;
        }
      Attrs& a = n->attrs();
      if (a.has("bias_")) {  // nnq.Linear's constructor keyword
        bool bias = a.get_bool("bias_", true);
        a.erase("bias_");
        a.set("bias", bias);
      }
      // The int8 module's own keywords (Note [Float twins]).
      for (const char* k : {"dtype", "scale", "zero_point", "output_scale", "output_zero_point"})
        a.erase(k);
      n->set_op(p.op);
      classes_[n->module()] = p.cls;
      if (p.relu) {
        Node* r = g_.create("nn.ReLU", {n->output()}, 0);
        r->add_output(float_type(n->output()));
        r->insert_after(n);
        n->output()->replace_all_uses_with(r->output());
        r->replace_input(0, n->output());
        r->set_module(paths_.fresh(n->scope(), "relu"));
        // (The fresh path may be an original module's that no node called, e.g. the
        // nn.Identity that fusion left in place of this ReLU.)
        classes_[r->module()] = "torch.nn.modules.activation.ReLU";
        r->set_scope(n->scope());
        r->set_loc(n->loc());
      }
      return;
    }
    // QFunctional methods: plain torch ops on the same inputs.
    Node* f = g_.create(p.op, {}, 0);
    if (p.args.empty())
      for (Value* v : n->inputs()) f->add_input(v);
    for (int i : p.args)
      f->add_input(i < 0 ? g_.constant(NoneAttr{}, Type::of(Type::Kind::None), n)
                         : n->input(static_cast<size_t>(i)));
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

  // The module table (Note [Module table]) names the float classes: each twin's, and no entry for
  // the int8 modules that left (QFunctional, Quantize, DeQuantize) nor for their children
  // (QFunctional's activation_post_process).
  void rename_classes() {
    auto& mods = g_.modules();
    std::vector<std::string> gone;
    for (auto& [path, info] : mods) {
      if (auto c = classes_.find(path); c != classes_.end())
        info.type = c->second;
      else if (is_int8_class(info.type))
        gone.push_back(path);
    }
    for (const std::string& path : gone)
      for (auto it = mods.lower_bound(path); it != mods.end();) {
        if (it->first != path && it->first.rfind(path + ".", 0) != 0) break;
        it = mods.erase(it);
      }
  }

  void refuse_leftovers() {
    for (const Node* n : g_.all_nodes()) {
      std::string why = unhandled_quantized(n);
      if (why.empty()) continue;
      throw Error(ExitCode::Unsupported,
                  "--dequantize: " + describe(*n) + ": " + why +
                      " has no float twin in tinytrace yet (the twins are listed in "
                      "passes/dequantize.cpp, Note [Float twins]) — convert without --dequantize "
                      "to keep the int8 model")
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
  std::map<std::string, std::string> classes_;  // module path -> its float twin's class
};

}  // namespace

bool run_dequantize(Graph& g, PassContext& ctx) { return Dequantizer(g, ctx).run(); }

}  // namespace tt
