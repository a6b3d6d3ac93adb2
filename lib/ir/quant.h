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

}  // namespace tt
