// Module lowering: what a module op ("nn.Conv2d", "nn.LSTM", "nni.ConvReLU2d",
// "FloatFunctional.add", ...) computes in eval mode, written once as IR over ATen ops. The
// interpreter runs it (lib/exec/modules.cpp) and the TorchScript emitter prints it
// (lib/emitters/torchscript.cpp).
//
// Note [Module lowering]
// - lower_module(n) builds a fresh Graph with one input per input of `n` (typed like them) and
//   one output standing for n's result. Its nodes are ATen ops by qualified overload
//   ("aten::convolution", "aten::softmax.int"), `operator.*` int arithmetic, prim.Constant,
//   prim.ListConstruct/TupleConstruct, prim.If and prim.RaiseException. Weights are prim.GetAttr
//   nodes naming the weights of the graph `n` belongs to (`n.weight(key)`), so the lowered graph
//   runs against the parent's WeightStore; a weight the node does not have is the None
//   constant (an optional ATen argument).
// - Decisions the module makes from its attributes are made here, once; decisions it makes from
//   its input at run time (an unbatched RNN/attention input, a transformer layer's rank) are
//   prim.If nodes on the input's dim(), so the lowering is as shape-general as the module.
// - Module ops that need no computation (nn.Identity, the dropouts, the quantization stubs)
//   lower to their input itself: the result is the input tensor, as in PyTorch.
// - Composite modules (lib/ir/quant.h) lower part after part, each part with its own
//   attributes and weight prefix.
#pragma once

#include "ir/ir.h"

#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace tt {

// nn.TransformerEncoderLayer's weights (state_dict keys below the layer) in the order its fused
// kernel aten::_transformer_encoder_layer_fwd takes them: the attention's four, then (after
// use_gelu, norm_first and eps) the two norms' and the feed-forward's eight. The TorchScript
// recipe reads them in this order and the lowering passes them in it.
extern const std::array<const char*, 12> kTransformerEncoderWeights;

// Whether lower_module knows module op `op` (it may still refuse an attribute combination).
bool has_module_lowering(std::string_view op);

// The lowering of module node `n` (Note [Module lowering]); nullptr with `why` set when the op
// has no lowering or its attributes/inputs ask for something the lowering cannot express
// ("nn.MultiheadAttention with an attn_mask").
std::unique_ptr<Graph> lower_module(const Node& n, std::string& why);

}  // namespace tt
