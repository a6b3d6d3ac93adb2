// Ops of their own kind: the losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), STFT,
// OptionalHasElement/OptionalGetElement, and the random ops, which are refused (Note [Random ONNX
// ops]).
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

// Note [Random ONNX ops]
// RandomNormal(Like), RandomUniform(Like), Bernoulli and Multinomial draw from ONNX's generator:
// PyTorch's draws other numbers, so no conversion could give the original's outputs, and exit 0
// would not mean "computes what the original computes". They are refused (so is Dropout with
// training_mode set: tensor.cpp).
const char* const kRandom =
    "random values (PyTorch's generator draws other numbers than the ONNX runtime's, so the "
    "outputs could not be reproduced); export in eval mode without random ops";

Importer::OpList Importer::misc_ops() {
  auto refuse = [](Importer& im, const ox::NodeProto& n) { im.unsupported(n, kRandom); };
  return {
      {"RandomNormal", refuse},
      {"RandomNormalLike", refuse},
      {"RandomUniform", refuse},
      {"RandomUniformLike", refuse},
      {"Bernoulli", refuse},
      {"Multinomial", refuse},
      {"NegativeLogLikelihoodLoss", [](Importer& im, const ox::NodeProto& n) { im.lift_loss(n); }},
      {"SoftmaxCrossEntropyLoss", [](Importer& im, const ox::NodeProto& n) { im.lift_loss(n); }},
      {"STFT", [](Importer& im, const ox::NodeProto& n) { im.lift_stft(n); }},
      // Optional values (a scripted model's Optional[Tensor]) are the value or None.
      {"OptionalHasElement",
       [](Importer& im, const ox::NodeProto& n) {
         if (!im.has_input(n, 0)) {
           im.consts_[n.output(0)] = at::scalar_tensor(false);
           return;
         }
         im.set_sym(n,
                    {im.scalar_op("operator.is_not", {im.tensor_in(n.input(0)), im.c_none()},
                                  Type::Kind::Bool)},
                    true);
       }},
      {"Optional",
       [](Importer& im, const ox::NodeProto& n) {
         im.bind(n, 0, im.has_input(n, 0) ? im.tensor_in(n.input(0)) : im.c_none());
       }},
      {"OptionalGetElement",
       [](Importer& im, const ox::NodeProto& n) { im.bind(n, 0, im.tensor_in(n.input(0))); }},
  };
}

// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: ATen's nll_loss_nd / cross_entropy_loss
// (reduction none/mean/sum as 0/1/2; without ignore_index no target is ignored: ONNX's targets
// are then all in [0, C), and -100, ATen's default, is none of them). SoftmaxCrossEntropyLoss's
// second output is the input's log_softmax over dim 1.
void Importer::lift_loss(const ox::NodeProto& n) {
  std::string red = attr_s(n, "reduction", "mean");
  int64_t r = red == "none" ? 0 : red == "mean" ? 1 : red == "sum" ? 2 : -1;
  if (r < 0) unsupported(n, "reduction '" + red + "'");
  Value* x = tensor_in(n.input(0));
  Value* weight = has_input(n, 2) ? tensor_in(n.input(2)) : c_none();
  Value* ignore = c_int(attr_i(n, "ignore_index", -100));
  bool sce = n.op_type() == "SoftmaxCrossEntropyLoss";
  std::vector<Value*> ins = {x, tensor_in(n.input(1)), weight, c_int(r), ignore};
  if (sce) ins.push_back(c_float(0.0));  // label_smoothing
  call(sce ? "aten::cross_entropy_loss" : "aten::nll_loss_nd", ins, n);
  if (sce && n.output_size() > 1 && !n.output(1).empty())
    call("F.log_softmax", {x, c_int(1), c_none()}, n, 1);
}

// STFT(signal [batch, length, 1], frame_step, window, frame_length) -> [batch, frames, bins, 2]:
// torch.stft without centering, as real pairs, frames before bins.
void Importer::lift_stft(const ox::NodeProto& n) {
  auto shape = known_shape(n.input(0));
  if (!shape || shape->size() != 3 || shape->back() != 1)
    unsupported(n, "a signal that is not real [batch, length, 1] of known shape");
  const at::Tensor* step = const_of(n, 1);
  const at::Tensor* len = const_of(n, 3);
  if (!step || (has_input(n, 3) && !len))
    unsupported(n, "frame step or length computed at run time");
  auto wshape = has_input(n, 2) ? known_shape(n.input(2)) : std::nullopt;
  if (has_input(n, 2) && (!wshape || wshape->size() != 1))
    unsupported(n, "a window of unknown size");
  int64_t frame = len ? len->item<int64_t>() : (wshape ? (*wshape)[0] : -1);
  if (frame <= 0) unsupported(n, "neither a frame length nor a window");
  if (wshape && (*wshape)[0] != frame) unsupported(n, "a window shorter than the frame");
  Value* x = method("Tensor.squeeze", {tensor_in(n.input(0)), c_int(-1)});
  Value* window = has_input(n, 2) ? tensor_in(n.input(2)) : c_none();
  Value* spec =
      append("aten::stft", {x, c_int(frame), c_int(step->item<int64_t>()), c_int(frame), window,
                            c_bool(false), c_bool(attr_i(n, "onesided", 1) != 0), c_bool(true)})
          ->add_output(Type::tensor(DType::C64));
  Value* pairs = method("aten::view_as_real", {spec});
  call("Tensor.transpose", {pairs, c_int(1), c_int(2)}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
