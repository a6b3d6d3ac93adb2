// Eager-mode quantization vocabulary shared by the --quant-prep passes, the emitters, the
// interpreter and the report: composite (intrinsic) modules and which ops must run in float.
//
// Note [Composite modules]
// torch.ao.nn.intrinsic modules (nni.ConvReLU2d, nni.ConvBnReLU2d, ...) are nn.Sequential
// subclasses built from their parts: `nni.ConvReLU2d(nn.Conv2d(...), nn.ReLU())`. In the IR a
// composite is one module node whose
// - attrs are the parts' constructor keywords: the first part's unprefixed, the other parts' with
//   the part's prefix ("bn_eps", "bn_num_features"); parts without attributes (ReLU) have none;
// - weight keys are "<part index>.<key>" ("0.weight", "1.running_mean"), so state_dict names are
//   "<path>.0.weight", exactly as the Sequential keeps them.
// The table below is the one place that says which parts a composite has.
#pragma once

#include "ir/ir.h"

#include <ATen/core/ivalue.h>

#include <string>
#include <string_view>
#include <vector>

namespace tt {

struct CompositePart {
  std::string op;           // "nn.Conv2d"
  std::string attr_prefix;  // "" for the first part, "bn_" / "relu_" for later ones
};

// Parts of a composite module op, in Sequential order; nullptr when `op` is not a composite.
const std::vector<CompositePart>* composite_parts(std::string_view op);
// Attributes of part `i` of composite node `n`, with the prefix removed.
Attrs composite_part_attrs(const Node& n, size_t i);
// Weight key of part `i`'s weight `key`: "1.running_mean".
std::string composite_weight_key(size_t i, const std::string& key);

// QuantStub / DeQuantStub module ops (torch.ao.quantization stubs; identity before convert).
inline bool is_quant_stub(const Node* n) { return n->is("quant.QuantStub"); }
inline bool is_dequant_stub(const Node* n) { return n->is("quant.DeQuantStub"); }
// The module ops of an int8 model (Note [Quantized modules] in the TorchScript lifter):
// torch.ao.nn.quantized (nnq.), .intrinsic.quantized (nniq.), .quantized.dynamic (nnqd.) and
// QFunctional's methods.
inline bool is_int8_module_op(std::string_view op) {
  for (std::string_view p : {"nnq.", "nniq.", "nnqd.", "QFunctional."})
    if (op.substr(0, p.size()) == p) return true;
  return false;
}

// Note [Float-only ops]
// An op eager quantization cannot run on quantized tensors: QuantClass::Float in the op table,
// a tensor-by-tensor sub/div (FloatFunctional has neither), an ATen fallback op, an op of
// unknown class that takes a tensor, or a tensor add/mul/cat that is not a FloatFunctional call. Ops that run on quantized tensors: Native, NeedsModule,
// FloatFunctional (and the FloatFunctional.* / nni.* / quant.* ops of the quant-prep passes).
// Returns the reason ("" when the op can run quantized).
std::string float_only_reason(const Node* n);

// What an op does to the quantization "domain" of tensor values (quantized after convert, or
// float), from the QuantStubs on.
enum class DomainRule : int8_t {
  Keep,        // Native and Shape ops, prim ops: the output has the domain of the inputs
  NeedsQuant,  // Conv/Linear/BN modules, FloatFunctional, intrinsic modules: quantized in and out
  Float,       // float-only ops (float_only_reason): float in and out
  ToQuant,     // quant.QuantStub
  ToFloat,     // quant.DeQuantStub
};
DomainRule domain_rule(const Node* n);
// Values of this type can be (or hold) a quantized tensor; ints, floats, bools, strings cannot
// (x.size(1) of a quantized x is a plain int).
bool may_hold_tensor(const Type& t);

// One region of float fallback in a prepared graph: consecutive float-only ops connected by the
// float values between them (see passes/float_fallback.cpp).
struct FloatRegion {
  std::vector<const Node*> nodes;  // in graph order
  std::vector<std::string> ops;    // distinct ops of the region, first-seen order
};
// The float-only ops of `g` grouped into regions (connected through their tensor values).
std::vector<FloatRegion> float_fallback_regions(const Graph& g);

// Note [State of quantized modules]
// The IR keeps a quantized module's state as plain weights, named like the tensors of its eager
// state_dict: nnq.Conv2d's weight (a quantized tensor), bias, scale and zero_point (0-dim
// tensors), nnq.Linear's the same four. NAME.pth is a plain dict (torch.load gives no version
// metadata), which torch.ao.nn.quantized's load_state_dict reads as its first layout: exactly
// these four names for a convolution or a linear layer (a qint8 linear; the layouts of later
// versions keep them inside _packed_params), with `bias: None` for one without bias.
// state_dict_items writes the graph's weights in that form, in the store's order, so that
// `model.load_state_dict(torch.load("NAME.pth"), strict=True)` works on the generated code.
std::vector<std::pair<std::string, c10::IValue>> state_dict_items(const Graph& g);

}  // namespace tt
