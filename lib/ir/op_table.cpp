// The op table (see op_table.h): one row of data per op tinytrace knows.
//
// Note [Op table rows]
// - `aten` lists the overloads an IR op stands for. All overloads of one row share the same
//   positional layout (they differ only in argument types, or a shorter overload is a prefix of a
//   longer one), so one `py_args` vector is right for every overload of the row. Where ATen has
//   overloads with conflicting layouts, either the loader normalises to one overload
//   (aten::arange -> arange.start_step, aten::to.device/dtype_layout -> to.dtype on CPU,
//   aten::to.device with another device -> to.prim_Device,
//   aten::constant_pad_nd/reflection_pad/replication_pad -> aten::pad, aten::_convolution ->
//   conv{N}d / conv_transpose{N}d) or the other overload gets its own valid Python spelling
//   (aten::mean -> Tensor.mean, aten::mean.dim -> torch.mean).
// - py_args: "" positional, "name" keyword, "-" dropped (only for arguments that cannot change
//   the result on CPU, e.g. cudnn_enabled), "=" dropped where it holds the schema's default (the
//   Python call has no such parameter: F.elu's scale, F.rrelu's generator; the TorchScript lifter
//   keeps any other value as an ATen call). Positional entries always precede keyword entries.
// - Python signatures were checked against torch 1.13 (inspect.signature and trial calls); the
//   e2e suites run every row on torch 2.6.
// - Module rows: `aten` is the ATen op found in the module's traced forward; py_args unused
//   (their attributes are constructor keywords).
// - qclass follows DESIGN.md §5.
// - F.interpolate is the one function row whose inputs are NOT in ATen order: its inputs are
//   (input, size, scale_factor, mode, align_corners) because it stands for a family of
//   upsample_* ops; it is therefore not reachable through find_op_by_aten (the loader builds it).
#include "ir/op_table.h"

#include "ir/ir.h"

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tt {

namespace {

using K = OpKind;
using Q = QuantClass;

// Shorthands for py_args.
const std::vector<std::string> kAllPositional = {};

// clang-format off
// (The fact lists and the rows below are tables: one op or row per line, kept as written.)
// Note [Op facts] (op_table.h): which rows have which fact, and the functional form of the
// module rows that functional-to-module makes. Every name must be a row (checked here and by
// test_op_table).
void add_facts(std::vector<OpInfo>& t) {
  auto row = [&](std::string_view name) -> OpInfo& {
    for (OpInfo& op : t)
      if (op.name == name) return op;
    throw std::logic_error("op table: a fact names an op without a row: " + std::string(name));
  };
  for (const char* n : {"prim.Constant", "prim.GetAttr", "prim.ListConstruct", "prim.TupleConstruct",
                        "prim.ListUnpack", "prim.TupleUnpack", "prim.TupleIndex", "prim.NumToTensor",
                        "prim.If", "prim.Loop", "prim.Uninitialized", "prim.DictConstruct"})
    row(n).facts |= kPureOp;
  for (const char* n :
       {"nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "nn.InstanceNorm1d", "nn.InstanceNorm2d",
        "nn.InstanceNorm3d", "nn.LayerNorm", "nn.RMSNorm", "nn.TransformerEncoderLayer", "nn.GroupNorm",
        "nn.ReLU", "nn.ReLU6", "nn.Hardtanh", "nn.LeakyReLU", "nn.PReLU", "nn.ELU", "nn.GELU", "nn.SiLU",
        "nn.Hardswish", "nn.Hardsigmoid", "nn.Sigmoid", "nn.Tanh", "nn.Softmax", "nn.Identity",
        "nn.Dropout", "nn.Dropout2d", "F.relu", "F.relu6", "F.hardtanh", "F.leaky_relu", "F.elu",
        "F.gelu", "F.silu", "F.mish", "F.softplus", "F.hardswish", "F.hardsigmoid", "F.prelu",
        "F.dropout", "F.batch_norm", "F.rms_norm", "F.instance_norm", "F.layer_norm", "F.group_norm",
        "torch.sigmoid", "torch.tanh"})
    row(n).facts |= kKeepsInputShape;
  for (const char* n : {"nn.Identity", "nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d",
                        "nn.AlphaDropout", "nn.FeatureAlphaDropout", "nn.Flatten", "nn.Unflatten",
                        "quant.QuantStub", "quant.DeQuantStub", "nnq.Dropout"})
    row(n).facts |= kReturnsInput;
  for (const char* n : {"nn.ReLU", "nn.ReLU6", "nn.Hardtanh", "nn.LeakyReLU", "nn.ELU", "nn.SiLU",
                        "nn.Hardswish", "nn.Hardsigmoid", "nn.Dropout", "nn.Dropout1d", "nn.Dropout2d",
                        "nn.Dropout3d", "nn.AlphaDropout", "nn.FeatureAlphaDropout", "nnq.LeakyReLU",
                        "nnq.ReLU6", "nnq.Dropout"})
    row(n).facts |= kInplaceKeyword;
  for (const char* n : {"Tensor.view", "Tensor.reshape", "Tensor.view_as", "Tensor.permute", "Tensor.transpose",
                        "Tensor.t", "Tensor.expand", "Tensor.expand_as", "Tensor.slice", "Tensor.select",
                        "Tensor.squeeze", "Tensor.unsqueeze", "Tensor.unflatten", "Tensor.contiguous",
                        "Tensor.to", "Tensor.to_device", "Tensor.type_as", "Tensor.detach", "Tensor.chunk", "Tensor.split",
                        "Tensor.split_with_sizes", "Tensor.unbind", "torch.flatten", "F.dropout", "int",
                        "float", "Tensor.cpu"})
    row(n).facts |= kMayAliasInput;
  for (const char* n : {"operator.getitem", "list", "list.slice", "dict.keys", "dict.values",
                        "dict.items", "dict.get", "dict.copy", "dict"})
    row(n).facts |= kSharesInputItems;
  for (const char* n : {"list.append", "list.extend", "list.insert", "list.pop", "list.remove",
                        "list.clear", "list.reverse", "list.sort", "operator.imul", "dict.pop", "dict.clear",
                        "dict.setdefault", "dict.update", "operator.setitem", "operator.delitem"})
    row(n).facts |= kWritesContainer;
  row("F.interpolate").facts |= kInputsNotAtenOrder;
  // functional-to-module: the module a functional op becomes, in the order the pass tries them.
  struct Pair {
    const char* module;
    const char* aten;
    const char* stem;
  };
  for (const Pair& p : {Pair{"nn.ReLU", "aten::relu", "relu"}, Pair{"nn.ReLU6", "aten::relu6", "relu6"},
                        Pair{"nn.Hardtanh", "aten::hardtanh", "hardtanh"},
                        Pair{"nn.Hardswish", "aten::hardswish", "hardswish"}, Pair{"nn.ELU", "aten::elu", "elu"},
                        Pair{"nn.LeakyReLU", "aten::leaky_relu", "leaky_relu"},
                        Pair{"nn.Sigmoid", "aten::sigmoid", "sigmoid"}, Pair{"nn.Tanh", "aten::tanh", "tanh"},
                        Pair{"nn.Hardsigmoid", "aten::hardsigmoid", "hardsigmoid"},
                        Pair{"nn.PReLU", "aten::prelu", "prelu"}, Pair{"nn.Dropout", "aten::dropout", "dropout"}}) {
    OpInfo& m = row(p.module);
    m.functional_aten = p.aten;
    m.attr_stem = p.stem;
  }
}

std::vector<OpInfo> make_table() {
  std::vector<OpInfo> t = {
      // ---------------------------------------------------------------------------------------
      // prim ops (graph structure; emitted specially)
      {"prim.Constant", K::Prim, {}, {}, Q::Shape, "a constant value (attr `value`)"},
      {"prim.GetAttr", K::Prim, {}, {}, Q::Shape, "read of a model parameter/buffer (weight `value`)"},
      {"prim.ListConstruct", K::Prim, {}, {}, Q::Shape, "build a list: [a, b]"},
      {"prim.TupleConstruct", K::Prim, {}, {}, Q::Shape, "build a tuple: (a, b)"},
      {"prim.DictConstruct", K::Prim, {}, {}, Q::Shape, "build a dict from (key, value, key, value, ...): {k: v}"},
      {"prim.ListUnpack", K::Prim, {}, {}, Q::Shape, "a, b = list"},
      {"prim.TupleUnpack", K::Prim, {}, {}, Q::Shape, "a, b = tuple"},
      {"prim.TupleIndex", K::Prim, {}, {}, Q::Shape, "tuple[i] (inputs: tuple, index constant)"},
      {"prim.NumToTensor", K::Prim, {}, {}, Q::Shape, "a Python number as a 0-dim tensor"},
      {"prim.If", K::Prim, {}, {}, Q::Shape, "if/else with two blocks"},
      {"prim.Loop", K::Prim, {}, {}, Q::Shape, "loop with one block"},
      {"prim.Uninitialized", K::Prim, {}, {}, Q::Shape, "the value a branch that raised returns (never read)"},
      // Module attributes kept between calls (Note [Module state] in lib/exec/alias.h): attrs
      // `module` (path) and `name`; not pure, so every pass keeps them in program order.
      {"prim.StateGet", K::Prim, {}, {}, Q::Shape, "self.<module>.<name> (input: its value before any write)"},
      {"prim.StateSet", K::Prim, {}, {}, Q::Shape, "self.<module>.<name> = v"},

      // ---------------------------------------------------------------------------------------
      // module ops (attrs = torch.nn constructor keywords)
      {"nn.Conv1d", K::Module, {"aten::_convolution", "aten::_convolution_mode"}, {}, Q::NeedsModule, "1-d convolution"},
      {"nn.Conv2d", K::Module, {"aten::_convolution", "aten::_convolution_mode"}, {}, Q::NeedsModule, "2-d convolution"},
      {"nn.Conv3d", K::Module, {"aten::_convolution", "aten::_convolution_mode"}, {}, Q::NeedsModule, "3-d convolution"},
      {"nn.ConvTranspose1d", K::Module, {"aten::_convolution"}, {}, Q::NeedsModule, "1-d transposed convolution"},
      {"nn.ConvTranspose2d", K::Module, {"aten::_convolution"}, {}, Q::NeedsModule, "2-d transposed convolution"},
      {"nn.ConvTranspose3d", K::Module, {"aten::_convolution"}, {}, Q::NeedsModule, "3-d transposed convolution"},
      {"nn.Linear", K::Module, {"aten::linear"}, {}, Q::NeedsModule, "fully connected layer"},
      // No quantized BatchNorm1d module exists in 1.13: unless fused, it stays float.
      {"nn.BatchNorm1d", K::Module, {"aten::batch_norm"}, {}, Q::Float, "batch normalisation (2-d/3-d input)"},
      {"nn.BatchNorm2d", K::Module, {"aten::batch_norm"}, {}, Q::NeedsModule, "batch normalisation (4-d input)"},
      {"nn.BatchNorm3d", K::Module, {"aten::batch_norm"}, {}, Q::NeedsModule, "batch normalisation (5-d input)"},
      {"nn.LayerNorm", K::Module, {"aten::layer_norm"}, {}, Q::NeedsModule, "layer normalisation"},
      {"nn.GroupNorm", K::Module, {"aten::group_norm"}, {}, Q::NeedsModule, "group normalisation"},
      {"nn.TransformerEncoderLayer", K::Module, {"aten::_transformer_encoder_layer_fwd"}, {}, Q::Float,
       "transformer encoder layer (lifted from its fused fast path: batch_first, eval)"},
      {"nn.RMSNorm", K::Module, {"aten::rms_norm"}, {}, Q::Float, "root-mean-square normalisation (torch >= 2.4)"},
      {"nn.InstanceNorm1d", K::Module, {"aten::instance_norm"}, {}, Q::NeedsModule, "instance normalisation (1-d)"},
      {"nn.InstanceNorm2d", K::Module, {"aten::instance_norm"}, {}, Q::NeedsModule, "instance normalisation (2-d)"},
      {"nn.InstanceNorm3d", K::Module, {"aten::instance_norm"}, {}, Q::NeedsModule, "instance normalisation (3-d)"},
      // Float: integer indices in, float rows out even once quantized (weight-only, see Note
      // [qconfig of float modules] in lib/emitters/python/module_tree.cpp).
      {"nn.Embedding", K::Module, {"aten::embedding"}, {}, Q::Float, "embedding lookup table"},
      {"nn.EmbeddingBag", K::Module, {"aten::embedding_bag.padding_idx"}, {}, Q::Float, "bags of embeddings reduced by sum, mean or max"},
      {"nn.ReLU", K::Module, {"aten::relu"}, {}, Q::Native, "ReLU activation"},
      {"nn.ReLU6", K::Module, {"aten::hardtanh"}, {}, Q::NeedsModule, "ReLU6 activation (hardtanh 0..6)"},
      {"nn.Hardtanh", K::Module, {"aten::hardtanh"}, {}, Q::Native, "hardtanh activation"},
      {"nn.LeakyReLU", K::Module, {"aten::leaky_relu"}, {}, Q::NeedsModule, "leaky ReLU activation"},
      {"nn.PReLU", K::Module, {"aten::prelu"}, {}, Q::NeedsModule, "parametric ReLU"},
      {"nn.ELU", K::Module, {"aten::elu"}, {}, Q::NeedsModule, "ELU activation"},
      {"nn.GELU", K::Module, {"aten::gelu"}, {}, Q::Native, "GELU activation"},
      {"nn.SiLU", K::Module, {"aten::silu"}, {}, Q::Float, "SiLU (swish) activation"},
      {"nn.Hardswish", K::Module, {"aten::hardswish"}, {}, Q::NeedsModule, "hard swish activation"},
      {"nn.Hardsigmoid", K::Module, {"aten::hardsigmoid"}, {}, Q::Native, "hard sigmoid activation"},
      {"nn.Sigmoid", K::Module, {"aten::sigmoid"}, {}, Q::Native, "sigmoid activation"},
      {"nn.Tanh", K::Module, {"aten::tanh"}, {}, Q::Native, "tanh activation"},
      {"nn.Softmax", K::Module, {"aten::softmax.int"}, {}, Q::Float, "softmax over `dim`"},
      {"nn.LogSoftmax", K::Module, {"aten::log_softmax.int"}, {}, Q::Float, "log-softmax over `dim`"},
      {"nn.MaxPool1d", K::Module, {"aten::max_pool1d"}, {}, Q::Native, "1-d max pooling"},
      {"nn.MaxPool2d", K::Module, {"aten::max_pool2d"}, {}, Q::Native, "2-d max pooling"},
      {"nn.MaxPool3d", K::Module, {"aten::max_pool3d"}, {}, Q::Native, "3-d max pooling"},
      {"nn.AvgPool1d", K::Module, {"aten::avg_pool1d"}, {}, Q::Native, "1-d average pooling"},
      {"nn.AvgPool2d", K::Module, {"aten::avg_pool2d"}, {}, Q::Native, "2-d average pooling"},
      {"nn.AvgPool3d", K::Module, {"aten::avg_pool3d"}, {}, Q::Native, "3-d average pooling"},
      {"nn.AdaptiveAvgPool1d", K::Module, {"aten::adaptive_avg_pool1d"}, {}, Q::Native, "1-d adaptive average pooling"},
      {"nn.AdaptiveAvgPool2d", K::Module, {"aten::adaptive_avg_pool2d"}, {}, Q::Native, "2-d adaptive average pooling"},
      {"nn.AdaptiveAvgPool3d", K::Module, {"aten::adaptive_avg_pool3d"}, {}, Q::Native, "3-d adaptive average pooling"},
      // Checked on quantized tensors (torch 1.13, qnnpack): adaptive max pooling, pooling with
      // indices, roll and dtype conversions have no quantized kernel, so they stay float.
      {"nn.AdaptiveMaxPool1d", K::Module, {"aten::adaptive_max_pool1d"}, {}, Q::Float, "1-d adaptive max pooling"},
      {"nn.AdaptiveMaxPool2d", K::Module, {"aten::adaptive_max_pool2d"}, {}, Q::Float, "2-d adaptive max pooling"},
      {"nn.AdaptiveMaxPool3d", K::Module, {"aten::adaptive_max_pool3d"}, {}, Q::Float, "3-d adaptive max pooling"},
      {"nn.Flatten", K::Module, {"aten::flatten.using_ints"}, {}, Q::Native, "flatten dims start_dim..end_dim"},
      {"nn.Dropout", K::Module, {"aten::dropout"}, {}, Q::Native, "dropout (identity in eval)"},
      // Lifted from scripted models (their traces show no op): not yet classified for eager
      // quantization, so --quant-prep keeps them float.
      {"nn.Dropout1d", K::Module, {}, {}, Q::Unknown, "channel dropout, 1-d (identity in eval)"},
      {"nn.Dropout2d", K::Module, {}, {}, Q::Unknown, "channel dropout, 2-d (identity in eval)"},
      {"nn.Dropout3d", K::Module, {}, {}, Q::Unknown, "channel dropout, 3-d (identity in eval)"},
      {"nn.AlphaDropout", K::Module, {}, {}, Q::Unknown, "alpha dropout (identity in eval)"},
      {"nn.FeatureAlphaDropout", K::Module, {}, {}, Q::Unknown, "feature alpha dropout (identity in eval)"},
      {"nn.Unflatten", K::Module, {}, {}, Q::Unknown, "split dim into unflattened_size"},
      {"nn.Identity", K::Module, {}, {}, Q::Native, "identity"},
      {"nn.Upsample", K::Module,
       {"aten::upsample_nearest1d.vec", "aten::upsample_nearest2d.vec", "aten::upsample_nearest3d.vec",
        "aten::_upsample_nearest_exact1d.vec", "aten::_upsample_nearest_exact2d.vec",
        "aten::_upsample_nearest_exact3d.vec", "aten::upsample_linear1d.vec",
        "aten::upsample_bilinear2d.vec", "aten::upsample_bicubic2d.vec",
        "aten::upsample_trilinear3d.vec"},
       {}, Q::Native, "upsampling by size or scale_factor"},
      {"nn.PixelShuffle", K::Module, {"aten::pixel_shuffle"}, {}, Q::Native, "pixel shuffle"},
      {"nn.ZeroPad2d", K::Module, {"aten::pad", "aten::constant_pad_nd"}, {}, Q::Native, "zero padding"},
      {"nn.ConstantPad2d", K::Module, {"aten::pad", "aten::constant_pad_nd"}, {}, Q::Native, "constant padding"},
      // Static eager quantization has no LSTM/GRU/MHA modules (only dynamic or custom ones).
      {"nn.LSTM", K::Module, {"aten::lstm.input"}, {}, Q::Float, "LSTM (returns output, (h, c))"},
      {"nn.GRU", K::Module, {"aten::gru.input"}, {}, Q::Float, "GRU (returns output, h)"},
      {"nn.RNN", K::Module, {"aten::rnn_tanh.input", "aten::rnn_relu.input"}, {}, Q::Float, "Elman RNN, tanh or relu (returns output, h)"},
      {"nn.MultiheadAttention", K::Module, {"aten::_native_multi_head_attention"}, {}, Q::Float, "multi-head attention"},
      // --quant-prep: eager quantization stubs (identity before convert) and intrinsic modules
      // (composites of the modules above; lib/ir/quant.h lists their parts).
      {"quant.QuantStub", K::Module, {}, {}, Q::Shape, "quantize here after convert (identity before)"},
      {"quant.DeQuantStub", K::Module, {}, {}, Q::Shape, "dequantize here after convert (identity before)"},
      {"nni.ConvReLU1d", K::Module, {}, {}, Q::NeedsModule, "Conv1d + ReLU (fused for quantization)"},
      {"nni.ConvReLU2d", K::Module, {}, {}, Q::NeedsModule, "Conv2d + ReLU (fused for quantization)"},
      {"nni.ConvReLU3d", K::Module, {}, {}, Q::NeedsModule, "Conv3d + ReLU (fused for quantization)"},
      {"nni.ConvBn1d", K::Module, {}, {}, Q::NeedsModule, "Conv1d + BatchNorm1d (fused for QAT)"},
      {"nni.ConvBn2d", K::Module, {}, {}, Q::NeedsModule, "Conv2d + BatchNorm2d (fused for QAT)"},
      {"nni.ConvBn3d", K::Module, {}, {}, Q::NeedsModule, "Conv3d + BatchNorm3d (fused for QAT)"},
      {"nni.ConvBnReLU1d", K::Module, {}, {}, Q::NeedsModule, "Conv1d + BatchNorm1d + ReLU (fused for QAT)"},
      {"nni.ConvBnReLU2d", K::Module, {}, {}, Q::NeedsModule, "Conv2d + BatchNorm2d + ReLU (fused for QAT)"},
      {"nni.ConvBnReLU3d", K::Module, {}, {}, Q::NeedsModule, "Conv3d + BatchNorm3d + ReLU (fused for QAT)"},
      {"nni.LinearReLU", K::Module, {}, {}, Q::NeedsModule, "Linear + ReLU (fused for quantization)"},
      {"nni.LinearBn1d", K::Module, {}, {}, Q::NeedsModule, "Linear + BatchNorm1d (fused for QAT)"},
      {"nni.BNReLU2d", K::Module, {}, {}, Q::NeedsModule, "BatchNorm2d + ReLU (fused for quantization)"},
      {"nni.BNReLU3d", K::Module, {}, {}, Q::NeedsModule, "BatchNorm3d + ReLU (fused for quantization)"},

      // ---------------------------------------------------------------------------------------
      // Quantized modules of an int8 model (Note [Quantized modules] in
      // lib/loaders/torchscript/lifter_quantized.cpp): torch.ao.nn.quantized as nnq, its
      // intrinsic (fused) modules as nniq, the dynamic ones as nnqd. Their weights are their eager
      // state_dict entries (Note [State of quantized modules] in lib/ir/quant.h).
      {"nnq.Quantize", K::Module, {"aten::quantize_per_tensor"}, {}, Q::Unknown, "float -> quantized tensor (scale, zero_point, dtype)"},
      {"nnq.DeQuantize", K::Module, {"aten::dequantize.self"}, {}, Q::Unknown, "quantized -> float tensor"},
      {"nnq.Conv1d", K::Module, {"quantized::conv1d"}, {}, Q::Unknown, "quantized Conv1d"},
      {"nnq.Conv2d", K::Module, {"quantized::conv2d.new"}, {}, Q::Unknown, "quantized Conv2d"},
      {"nnq.Conv3d", K::Module, {"quantized::conv3d.new"}, {}, Q::Unknown, "quantized Conv3d"},
      {"nniq.ConvReLU1d", K::Module, {"quantized::conv1d_relu"}, {}, Q::Unknown, "quantized Conv1d + ReLU"},
      {"nniq.ConvReLU2d", K::Module, {"quantized::conv2d_relu.new"}, {}, Q::Unknown, "quantized Conv2d + ReLU"},
      {"nniq.ConvReLU3d", K::Module, {"quantized::conv3d_relu.new"}, {}, Q::Unknown, "quantized Conv3d + ReLU"},
      {"nnq.ConvTranspose1d", K::Module, {"quantized::conv_transpose1d"}, {}, Q::Unknown, "quantized ConvTranspose1d"},
      {"nnq.ConvTranspose2d", K::Module, {"quantized::conv_transpose2d"}, {}, Q::Unknown, "quantized ConvTranspose2d"},
      {"nnq.Linear", K::Module, {"quantized::linear"}, {}, Q::Unknown, "quantized Linear"},
      {"nniq.LinearReLU", K::Module, {"quantized::linear_relu"}, {}, Q::Unknown, "quantized Linear + ReLU"},
      {"nnqd.Linear", K::Module, {"quantized::linear_dynamic"}, {}, Q::Unknown, "dynamically quantized Linear (float in, float out)"},
      {"nnqd.LSTM", K::Module, {"aten::quantized_lstm.input"}, {}, Q::Unknown, "dynamically quantized LSTM (returns output, (h, c))"},
      {"nnqd.GRU", K::Module, {"aten::quantized_gru.input"}, {}, Q::Unknown, "dynamically quantized GRU (returns output, h)"},
      {"nnq.BatchNorm2d", K::Module, {"quantized::batch_norm2d"}, {}, Q::Unknown, "quantized BatchNorm2d"},
      {"nnq.BatchNorm3d", K::Module, {"quantized::batch_norm3d"}, {}, Q::Unknown, "quantized BatchNorm3d"},
      {"nniq.BNReLU2d", K::Module, {"quantized::batch_norm2d_relu"}, {}, Q::Unknown, "quantized BatchNorm2d + ReLU"},
      {"nniq.BNReLU3d", K::Module, {"quantized::batch_norm3d_relu"}, {}, Q::Unknown, "quantized BatchNorm3d + ReLU"},
      {"nnq.Hardswish", K::Module, {"quantized::hardswish"}, {}, Q::Unknown, "quantized Hardswish"},
      {"nnq.ELU", K::Module, {"quantized::elu"}, {}, Q::Unknown, "quantized ELU"},
      {"nnq.LeakyReLU", K::Module, {"quantized::leaky_relu"}, {}, Q::Unknown, "quantized LeakyReLU"},
      {"nnq.Sigmoid", K::Module, {"quantized::sigmoid"}, {}, Q::Unknown, "quantized Sigmoid"},
      {"nnq.ReLU6", K::Module, {"quantized::relu6"}, {}, Q::Unknown, "quantized ReLU6"},
      {"nnq.Softmax", K::Module, {"quantized::softmax"}, {}, Q::Unknown, "quantized Softmax"},
      {"nnq.Dropout", K::Module, {}, {}, Q::Unknown, "identity in eval"},
      {"nnq.Embedding", K::Module, {"quantized::embedding_byte"}, {}, Q::Unknown, "quantized Embedding (8-bit rows, float scale and offset per row; float out)"},
      {"nnq.EmbeddingBag", K::Module, {"quantized::embedding_bag_byte"}, {}, Q::Unknown, "quantized EmbeddingBag, mode sum (8-bit rows; float out)"},
      // nnq.QFunctional, called through a method (`self.add_relu.add_relu(a, b)`).
      {"QFunctional.add", K::Module, {"quantized::add"}, {}, Q::Unknown, "a + b on quantized tensors"},
      {"QFunctional.add_relu", K::Module, {"quantized::add_relu"}, {}, Q::Unknown, "relu(a + b) on quantized tensors"},
      {"QFunctional.mul", K::Module, {"quantized::mul"}, {}, Q::Unknown, "a * b on quantized tensors"},
      {"QFunctional.cat", K::Module, {"quantized::cat"}, {}, Q::Unknown, "cat(tensors, dim) of quantized tensors"},
      {"QFunctional.add_scalar", K::Module, {"quantized::add_scalar"}, {}, Q::Unknown, "a + number on a quantized tensor"},
      {"QFunctional.mul_scalar", K::Module, {"quantized::mul_scalar"}, {}, Q::Unknown, "a * number on a quantized tensor"},

      // torch.ao.nn.quantized.FloatFunctional, called through a method (`self.ff.add(a, b)`):
      // one module instance per call site (passes/float_functional.cpp). Inputs are the method's
      // arguments: add/mul (a, b), add_scalar/mul_scalar (a, float), cat (tensors, dim).
      {"FloatFunctional.add", K::Module, {"aten::add.Tensor"}, {}, Q::FloatFunctional, "a + b"},
      {"FloatFunctional.add_scalar", K::Module, {"aten::add.Scalar"}, {}, Q::FloatFunctional, "a + number"},
      {"FloatFunctional.mul", K::Module, {"aten::mul.Tensor"}, {}, Q::FloatFunctional, "a * b"},
      {"FloatFunctional.mul_scalar", K::Module, {"aten::mul.Scalar"}, {}, Q::FloatFunctional, "a * number"},
      {"FloatFunctional.cat", K::Module, {"aten::cat"}, {}, Q::FloatFunctional, "cat(tensors, dim)"},
      {"FloatFunctional.add_relu", K::Module, {"aten::add.Tensor", "aten::relu"}, {}, Q::FloatFunctional, "relu(a + b)"},

      // ---------------------------------------------------------------------------------------
      // activations
      {"F.relu", K::Function, {"aten::relu"}, kAllPositional, Q::Native, "relu"},
      {"F.relu6", K::Function, {"aten::relu6"}, kAllPositional, Q::Native, "relu6"},
      {"F.hardtanh", K::Function, {"aten::hardtanh"}, kAllPositional, Q::Native, "hardtanh(input, min_val, max_val)"},
      {"F.leaky_relu", K::Function, {"aten::leaky_relu"}, kAllPositional, Q::Native, "leaky_relu(input, negative_slope)"},
      // aten::elu's scale/input_scale are always 1 for F.elu (selu/celu have their own ops).
      {"F.elu", K::Function, {"aten::elu"}, {"", "", "=", "="}, Q::NeedsModule, "elu(input, alpha)"},
      {"F.gelu", K::Function, {"aten::gelu"}, {"", "approximate"}, Q::Native, "gelu"},
      {"F.silu", K::Function, {"aten::silu"}, kAllPositional, Q::Float, "silu"},
      {"F.mish", K::Function, {"aten::mish"}, kAllPositional, Q::Float, "mish"},
      {"F.softplus", K::Function, {"aten::softplus"}, kAllPositional, Q::Float, "softplus(input, beta, threshold)"},
      {"F.selu", K::Function, {"aten::selu"}, kAllPositional, Q::Float, "selu"},
      {"F.hardswish", K::Function, {"aten::hardswish"}, kAllPositional, Q::NeedsModule, "hardswish"},
      {"F.hardsigmoid", K::Function, {"aten::hardsigmoid"}, kAllPositional, Q::Native, "hardsigmoid"},
      {"F.prelu", K::Function, {"aten::prelu"}, kAllPositional, Q::NeedsModule, "prelu(input, weight)"},
      {"F.glu", K::Function, {"aten::glu"}, kAllPositional, Q::Float, "glu(input, dim)"},
      {"torch.sigmoid", K::Function, {"aten::sigmoid"}, kAllPositional, Q::Native, "sigmoid"},
      {"torch.tanh", K::Function, {"aten::tanh"}, kAllPositional, Q::Native, "tanh"},
      // F.softmax's third positional parameter is _stacklevel, so dtype must be a keyword.
      {"F.softmax", K::Function, {"aten::softmax.int"}, {"", "", "dtype"}, Q::Float, "softmax(input, dim)"},
      {"F.log_softmax", K::Function, {"aten::log_softmax.int"}, {"", "", "dtype"}, Q::Float, "log_softmax(input, dim)"},
      {"F.dropout", K::Function, {"aten::dropout"}, kAllPositional, Q::Native, "dropout(input, p, training)"},

      // ---------------------------------------------------------------------------------------
      // linear / convolution / normalisation
      // Functional conv/linear read float weight tensors: eager quantization cannot run them on
      // quantized inputs (only the modules are swapped), so they stay float.
      {"F.linear", K::Function, {"aten::linear"}, kAllPositional, Q::Float, "linear(input, weight, bias)"},
      {"F.conv1d", K::Function, {"aten::conv1d", "aten::conv1d.padding"}, kAllPositional, Q::Float, "conv1d(input, weight, bias, stride, padding, dilation, groups)"},
      {"F.conv2d", K::Function, {"aten::conv2d", "aten::conv2d.padding"}, kAllPositional, Q::Float, "conv2d(input, weight, bias, stride, padding, dilation, groups)"},
      {"F.conv3d", K::Function, {"aten::conv3d", "aten::conv3d.padding"}, kAllPositional, Q::Float, "conv3d(input, weight, bias, stride, padding, dilation, groups)"},
      {"F.conv_transpose1d", K::Function, {"aten::conv_transpose1d"}, kAllPositional, Q::Float, "conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)"},
      {"F.conv_transpose2d", K::Function, {"aten::conv_transpose2d.input"}, kAllPositional, Q::Float, "conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)"},
      {"F.conv_transpose3d", K::Function, {"aten::conv_transpose3d.input"}, kAllPositional, Q::Float, "conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)"},
      // ATen order (input, weight, bias, running_mean, running_var, ...) differs from Python's
      // (input, running_mean, running_var, weight, bias, ...): keywords.
      {"F.batch_norm", K::Function, {"aten::batch_norm"},
       {"", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps", "-"},
       Q::Float, "batch_norm"},
      {"F.instance_norm", K::Function, {"aten::instance_norm"},
       {"", "weight", "bias", "running_mean", "running_var", "use_input_stats", "momentum", "eps", "-"},
       Q::Float, "instance_norm"},
      {"F.layer_norm", K::Function, {"aten::layer_norm"}, {"", "", "", "", "", "-"}, Q::Float, "layer_norm(input, normalized_shape, weight, bias, eps)"},
      {"F.group_norm", K::Function, {"aten::group_norm"}, {"", "", "", "", "", "-"}, Q::Float, "group_norm(input, num_groups, weight, bias, eps)"},
      {"F.rms_norm", K::Function, {"aten::rms_norm"}, kAllPositional, Q::Float, "rms_norm(input, normalized_shape, weight, eps)"},
      // torch 2.x: traced attention (torchvision's ViT, nn.MultiheadAttention's slow path, user
      // code). scale and enable_gqa are keyword-only in Python.
      {"F.scaled_dot_product_attention", K::Function, {"aten::scaled_dot_product_attention"},
       {"", "", "", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"}, Q::Float,
       "scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=, enable_gqa=)"},
      // ATen puts weight first; Python's F.embedding(input, weight, ...): keywords.
      {"F.embedding", K::Function, {"aten::embedding"},
       {"weight", "input", "padding_idx", "scale_grad_by_freq", "sparse"}, Q::Float, "embedding lookup"},

      // ---------------------------------------------------------------------------------------
      // pooling / resampling / padding
      {"F.max_pool1d", K::Function, {"aten::max_pool1d"}, kAllPositional, Q::Native, "max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)"},
      {"F.max_pool2d", K::Function, {"aten::max_pool2d"}, kAllPositional, Q::Native, "max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)"},
      {"F.max_pool3d", K::Function, {"aten::max_pool3d"}, kAllPositional, Q::Native, "max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)"},
      {"F.max_pool1d_with_indices", K::Function, {"aten::max_pool1d_with_indices"}, kAllPositional, Q::Float, "max pooling returning (values, indices)"},
      {"F.max_pool2d_with_indices", K::Function, {"aten::max_pool2d_with_indices"}, kAllPositional, Q::Float, "max pooling returning (values, indices)"},
      {"F.max_pool3d_with_indices", K::Function, {"aten::max_pool3d_with_indices"}, kAllPositional, Q::Float, "max pooling returning (values, indices)"},
      {"F.avg_pool1d", K::Function, {"aten::avg_pool1d"}, kAllPositional, Q::Native, "avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)"},
      {"F.avg_pool2d", K::Function, {"aten::avg_pool2d"}, kAllPositional, Q::Native, "avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)"},
      {"F.avg_pool3d", K::Function, {"aten::avg_pool3d"}, kAllPositional, Q::Native, "avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)"},
      {"F.adaptive_avg_pool1d", K::Function, {"aten::adaptive_avg_pool1d"}, kAllPositional, Q::Native, "adaptive_avg_pool1d(input, output_size)"},
      {"F.adaptive_avg_pool2d", K::Function, {"aten::adaptive_avg_pool2d"}, kAllPositional, Q::Native, "adaptive_avg_pool2d(input, output_size)"},
      {"F.adaptive_avg_pool3d", K::Function, {"aten::adaptive_avg_pool3d"}, kAllPositional, Q::Native, "adaptive_avg_pool3d(input, output_size)"},
      // aten::adaptive_max_pool returns (values, indices); so does F.*_with_indices.
      {"F.adaptive_max_pool1d_with_indices", K::Function, {"aten::adaptive_max_pool1d"}, kAllPositional, Q::Float, "adaptive max pooling returning (values, indices)"},
      {"F.adaptive_max_pool2d_with_indices", K::Function, {"aten::adaptive_max_pool2d"}, kAllPositional, Q::Float, "adaptive max pooling returning (values, indices)"},
      {"F.adaptive_max_pool3d_with_indices", K::Function, {"aten::adaptive_max_pool3d"}, kAllPositional, Q::Float, "adaptive max pooling returning (values, indices)"},
      {"F.interpolate", K::Function,
       {"aten::upsample_nearest1d.vec", "aten::upsample_nearest2d.vec", "aten::upsample_nearest3d.vec",
        "aten::_upsample_nearest_exact1d.vec", "aten::_upsample_nearest_exact2d.vec",
        "aten::_upsample_nearest_exact3d.vec", "aten::upsample_linear1d.vec",
        "aten::upsample_bilinear2d.vec", "aten::upsample_bicubic2d.vec",
        "aten::upsample_trilinear3d.vec", "aten::_upsample_bilinear2d_aa.vec",
        "aten::_upsample_bicubic2d_aa.vec"},
       {"", "size", "scale_factor", "mode", "align_corners", "antialias"}, Q::Native,
       "interpolate; inputs (input, size, scale_factor, mode, align_corners[, antialias]), not ATen order"},
      {"F.pad", K::Function, {"aten::pad"}, kAllPositional, Q::Native, "pad(input, pad, mode, value)"},
      {"F.pixel_shuffle", K::Function, {"aten::pixel_shuffle"}, kAllPositional, Q::Native, "pixel_shuffle(input, upscale_factor)"},
      {"F.pixel_unshuffle", K::Function, {"aten::pixel_unshuffle"}, kAllPositional, Q::Native, "pixel_unshuffle(input, downscale_factor)"},
      {"torch.grid_sampler", K::Function, {"aten::grid_sampler"}, kAllPositional, Q::Float, "grid_sampler(input, grid, mode, padding_mode, align_corners) with int modes"},

      // ---------------------------------------------------------------------------------------
      // elementwise arithmetic
      {"torch.add", K::Function, {"aten::add.Tensor", "aten::add.Scalar"}, {"", "", "alpha"}, Q::FloatFunctional, "input + alpha * other"},
      {"torch.sub", K::Function, {"aten::sub.Tensor", "aten::sub.Scalar"}, {"", "", "alpha"}, Q::Float, "input - alpha * other"},
      {"torch.rsub", K::Function, {"aten::rsub.Tensor", "aten::rsub.Scalar"}, {"", "", "alpha"}, Q::Float, "other - alpha * input"},
      {"torch.mul", K::Function, {"aten::mul.Tensor", "aten::mul.Scalar"}, kAllPositional, Q::FloatFunctional, "input * other"},
      {"torch.div", K::Function,
       {"aten::div.Tensor", "aten::div.Scalar", "aten::div.Tensor_mode", "aten::div.Scalar_mode"},
       {"", "", "rounding_mode"}, Q::Float, "input / other"},
      {"torch.floor_divide", K::Function, {"aten::floor_divide", "aten::floor_divide.Scalar"}, kAllPositional, Q::Float, "input // other"},
      {"torch.remainder", K::Function, {"aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor"}, kAllPositional, Q::Float, "input % other"},
      {"torch.fmod", K::Function, {"aten::fmod.Tensor", "aten::fmod.Scalar"}, kAllPositional, Q::Float, "C-style remainder (sign of input)"},
      {"torch.neg", K::Function, {"aten::neg"}, kAllPositional, Q::FloatFunctional, "-input"},
      {"torch.pow", K::Function, {"aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar", "aten::pow.Scalar"}, kAllPositional, Q::Float, "input ** exponent"},
      {"torch.exp", K::Function, {"aten::exp"}, kAllPositional, Q::Float, "exp"},
      {"torch.log", K::Function, {"aten::log"}, kAllPositional, Q::Float, "log"},
      {"torch.sqrt", K::Function, {"aten::sqrt"}, kAllPositional, Q::Float, "sqrt"},
      {"torch.rsqrt", K::Function, {"aten::rsqrt"}, kAllPositional, Q::Float, "1/sqrt"},
      {"torch.abs", K::Function, {"aten::abs"}, kAllPositional, Q::Float, "abs"},
      {"torch.square", K::Function, {"aten::square"}, kAllPositional, Q::Float, "square"},
      {"torch.reciprocal", K::Function, {"aten::reciprocal"}, kAllPositional, Q::Float, "1/x"},
      {"torch.erf", K::Function, {"aten::erf"}, kAllPositional, Q::Float, "erf"},
      {"torch.sin", K::Function, {"aten::sin"}, kAllPositional, Q::Float, "sin"},
      {"torch.cos", K::Function, {"aten::cos"}, kAllPositional, Q::Float, "cos"},
      {"torch.floor", K::Function, {"aten::floor"}, kAllPositional, Q::Float, "floor"},
      {"torch.ceil", K::Function, {"aten::ceil"}, kAllPositional, Q::Float, "ceil"},
      {"torch.clamp", K::Function, {"aten::clamp", "aten::clamp.Tensor"}, kAllPositional, Q::Native, "clamp(input, min, max)"},
      {"torch.clamp_min", K::Function, {"aten::clamp_min", "aten::clamp_min.Tensor"}, kAllPositional, Q::Native, "clamp_min(input, min)"},
      {"torch.clamp_max", K::Function, {"aten::clamp_max", "aten::clamp_max.Tensor"}, kAllPositional, Q::Native, "clamp_max(input, max)"},
      {"torch.maximum", K::Function, {"aten::maximum"}, kAllPositional, Q::Float, "elementwise maximum(input, other)"},
      {"torch.minimum", K::Function, {"aten::minimum"}, kAllPositional, Q::Float, "elementwise minimum(input, other)"},
      {"torch.sign", K::Function, {"aten::sign"}, kAllPositional, Q::Float, "sign"},
      {"torch.round", K::Function, {"aten::round"}, kAllPositional, Q::Float, "round half to even"},
      {"torch.where", K::Function,
       {"aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar", "aten::where"},
       kAllPositional, Q::Float, "where(condition, input, other)"},
      {"torch.eq", K::Function, {"aten::eq.Tensor", "aten::eq.Scalar"}, kAllPositional, Q::Float, "input == other"},
      {"torch.ne", K::Function, {"aten::ne.Tensor", "aten::ne.Scalar"}, kAllPositional, Q::Float, "input != other"},
      {"torch.gt", K::Function, {"aten::gt.Tensor", "aten::gt.Scalar"}, kAllPositional, Q::Float, "input > other"},
      {"torch.ge", K::Function, {"aten::ge.Tensor", "aten::ge.Scalar"}, kAllPositional, Q::Float, "input >= other"},
      {"torch.lt", K::Function, {"aten::lt.Tensor", "aten::lt.Scalar"}, kAllPositional, Q::Float, "input < other"},
      {"torch.le", K::Function, {"aten::le.Tensor", "aten::le.Scalar"}, kAllPositional, Q::Float, "input <= other"},
      {"torch.logical_not", K::Function, {"aten::logical_not"}, kAllPositional, Q::Float, "logical not"},
      {"Tensor.masked_fill", K::Method, {"aten::masked_fill.Scalar", "aten::masked_fill.Tensor"}, kAllPositional, Q::Float, "x.masked_fill(mask, value)"},

      // ---------------------------------------------------------------------------------------
      // matrix products
      {"torch.matmul", K::Function, {"aten::matmul"}, kAllPositional, Q::Float, "matrix product"},
      {"torch.bmm", K::Function, {"aten::bmm"}, kAllPositional, Q::Float, "batched matrix product"},
      {"torch.mm", K::Function, {"aten::mm"}, kAllPositional, Q::Float, "matrix product (2-d)"},
      {"torch.addmm", K::Function, {"aten::addmm"}, {"", "", "", "beta", "alpha"}, Q::Float, "beta*input + alpha*(mat1 @ mat2)"},
      {"torch.baddbmm", K::Function, {"aten::baddbmm"}, {"", "", "", "beta", "alpha"}, Q::Float, "beta*input + alpha*(b1 @ b2)"},
      // path is an opt_einsum contraction order hint: it never changes the result.
      {"torch.einsum", K::Function, {"aten::einsum"}, {"", "", "-"}, Q::Float, "einsum(equation, tensors)"},

      // ---------------------------------------------------------------------------------------
      // reductions
      {"torch.mean", K::Function, {"aten::mean.dim"}, {"", "", "", "dtype"}, Q::Native, "mean(input, dim, keepdim)"},
      {"Tensor.mean", K::Method, {"aten::mean"}, {"", "dtype"}, Q::Native, "x.mean() over all elements"},
      {"torch.sum", K::Function, {"aten::sum.dim_IntList"}, {"", "", "", "dtype"}, Q::Float, "sum(input, dim, keepdim)"},
      {"Tensor.norm", K::Method, {"aten::norm.Scalar"}, kAllPositional, Q::Float, "x.norm(p) over all elements"},
      {"Tensor.sum", K::Method, {"aten::sum"}, {"", "dtype"}, Q::Float, "x.sum() over all elements"},
      {"torch.prod", K::Function, {"aten::prod.dim_int"}, {"", "", "", "dtype"}, Q::Float, "prod(input, dim, keepdim)"},
      {"torch.cumsum", K::Function, {"aten::cumsum"}, {"", "", "dtype"}, Q::Float, "cumsum(input, dim)"},
      {"torch.amax", K::Function, {"aten::amax"}, kAllPositional, Q::Float, "amax(input, dim, keepdim)"},
      {"torch.amin", K::Function, {"aten::amin"}, kAllPositional, Q::Float, "amin(input, dim, keepdim)"},
      {"torch.max", K::Function, {"aten::max.dim", "aten::max", "aten::max.other"}, kAllPositional, Q::Float, "max (over dim: values, indices)"},
      {"torch.min", K::Function, {"aten::min.dim", "aten::min", "aten::min.other"}, kAllPositional, Q::Float, "min (over dim: values, indices)"},
      {"torch.argmax", K::Function, {"aten::argmax"}, kAllPositional, Q::Float, "argmax(input, dim, keepdim)"},
      {"torch.argmin", K::Function, {"aten::argmin"}, kAllPositional, Q::Float, "argmin(input, dim, keepdim)"},
      {"torch.topk", K::Function, {"aten::topk"}, kAllPositional, Q::Native, "topk(input, k, dim, largest, sorted)"},
      {"torch.sort", K::Function, {"aten::sort"}, kAllPositional, Q::Float, "sort(input, dim, descending)"},
      // torch.unique without dim: written through its call form with both flags True, so it returns
      // the three tensors _unique2 returns; the Python emitter keeps the ATen call where a result
      // the model reads would differ (a False flag: _unique2's result is then empty).
      {"torch.unique.flat", K::Function, {"aten::_unique2"}, kAllPositional, Q::Float, "torch.unique(input, sorted=, return_inverse=True, return_counts=True)"},
      {"torch.unique", K::Function, {"aten::unique_dim"}, {"", "dim", "sorted", "return_inverse", "return_counts"}, Q::Float, "unique(input, dim=, sorted=, return_inverse=, return_counts=)"},

      // ---------------------------------------------------------------------------------------
      // joining / splitting
      {"torch.cat", K::Function, {"aten::cat"}, kAllPositional, Q::FloatFunctional, "cat(tensors, dim)"},
      {"torch.stack", K::Function, {"aten::stack"}, kAllPositional, Q::FloatFunctional, "stack(tensors, dim)"},
      {"Tensor.chunk", K::Method, {"aten::chunk"}, kAllPositional, Q::Native, "x.chunk(chunks, dim)"},
      {"Tensor.split", K::Method, {"aten::split.Tensor", "aten::split.sizes", "aten::split"}, kAllPositional, Q::Native, "x.split(split_size, dim)"},
      {"Tensor.split_with_sizes", K::Method, {"aten::split_with_sizes"}, kAllPositional, Q::Native, "x.split_with_sizes(sizes, dim)"},
      {"Tensor.unbind", K::Method, {"aten::unbind.int"}, kAllPositional, Q::Native, "x.unbind(dim)"},

      // ---------------------------------------------------------------------------------------
      // views and shape
      {"torch.flatten", K::Function, {"aten::flatten.using_ints"}, kAllPositional, Q::Native, "flatten(input, start_dim, end_dim)"},
      {"Tensor.view", K::Method, {"aten::view", "aten::view.dtype"}, kAllPositional, Q::Native, "x.view(size)"},
      {"Tensor.reshape", K::Method, {"aten::reshape"}, kAllPositional, Q::Native, "x.reshape(shape)"},
      {"Tensor.view_as", K::Method, {"aten::view_as"}, kAllPositional, Q::Native, "x.view_as(other)"},
      {"Tensor.permute", K::Method, {"aten::permute"}, kAllPositional, Q::Native, "x.permute(dims)"},
      {"Tensor.transpose", K::Method, {"aten::transpose.int"}, kAllPositional, Q::Native, "x.transpose(dim0, dim1)"},
      {"Tensor.t", K::Method, {"aten::t"}, kAllPositional, Q::Native, "x.t()"},
      {"Tensor.contiguous", K::Method, {"aten::contiguous"}, {"", "memory_format"}, Q::Native, "x.contiguous()"},
      {"Tensor.unsqueeze", K::Method, {"aten::unsqueeze"}, kAllPositional, Q::Native, "x.unsqueeze(dim)"},
      {"Tensor.squeeze", K::Method, {"aten::squeeze", "aten::squeeze.dim"}, kAllPositional, Q::Native, "x.squeeze([dim])"},
      {"Tensor.unflatten", K::Method, {"aten::unflatten.int"}, kAllPositional, Q::Native, "x.unflatten(dim, sizes)"},
      // `implicit` is a tracer flag, not part of the Python API.
      {"Tensor.expand", K::Method, {"aten::expand"}, {"", "", "-"}, Q::Native, "x.expand(size)"},
      {"Tensor.expand_as", K::Method, {"aten::expand_as"}, kAllPositional, Q::Native, "x.expand_as(other)"},
      {"Tensor.repeat", K::Method, {"aten::repeat"}, kAllPositional, Q::Native, "x.repeat(repeats)"},
      {"torch.repeat_interleave", K::Function, {"aten::repeat_interleave.self_int", "aten::repeat_interleave.self_Tensor", "aten::repeat_interleave.Tensor"}, {"", "", "", "output_size"}, Q::Float, "repeat_interleave(input, repeats, dim)"},
      {"torch.flip", K::Function, {"aten::flip"}, kAllPositional, Q::Native, "flip(input, dims)"},
      {"torch.roll", K::Function, {"aten::roll"}, kAllPositional, Q::Float, "roll(input, shifts, dims)"},
      {"torch.tril", K::Function, {"aten::tril"}, kAllPositional, Q::Float, "tril(input, diagonal)"},
      {"torch.triu", K::Function, {"aten::triu"}, kAllPositional, Q::Float, "triu(input, diagonal)"},
      // The Python emitter renders these as indexing: x[:, a:b:c] and x.select(d, i).
      {"Tensor.slice", K::Method, {"aten::slice.Tensor"}, kAllPositional, Q::Native, "x[..., start:end:step] on dim (inputs: x, dim, start, end, step)"},
      {"Tensor.select", K::Method, {"aten::select.int"}, kAllPositional, Q::Native, "x.select(dim, index)"},
      {"torch.gather", K::Function, {"aten::gather"}, {"", "", "", "sparse_grad"}, Q::Float, "gather(input, dim, index)"},
      {"torch.index_select", K::Function, {"aten::index_select"}, kAllPositional, Q::Native, "index_select(input, dim, index)"},
      {"Tensor.size", K::Method, {"aten::size.int", "aten::size"}, kAllPositional, Q::Shape, "x.size([dim])"},
      {"Tensor.numel", K::Method, {"aten::numel"}, kAllPositional, Q::Shape, "x.numel()"},
      {"Tensor.dim", K::Method, {"aten::dim"}, kAllPositional, Q::Shape, "x.dim()"},
      // aten::IntImplicit: TorchScript's conversion of a 0-dim tensor passed where an int is
      // expected (`max(t, 1)`), the same number; only on inputs the original refuses (a 1-element
      // tensor of other dims, one that requires grad) does int() still answer.
      {"int", K::Function, {"aten::Int.Tensor", "aten::IntImplicit"}, kAllPositional, Q::Shape, "int(t) of a 0-dim tensor"},
      {"float", K::Function, {"aten::Float.Tensor"}, kAllPositional, Q::Shape, "float(t) of a 0-dim tensor"},
      {"bool", K::Function, {"aten::Bool.Tensor"}, kAllPositional, Q::Shape, "bool(t) of a 0-dim tensor"},
      // Python scalar/list builtins of scripted models (TorchScript-only overloads such as
      // aten::add.int; the loader maps them by name, the interpreter evaluates them with Python
      // semantics in dispatch.cpp). One overload each: the rest share the base name.
      {"operator.add", K::Function, {"aten::add.int", "aten::add.str", "aten::add.t", "aten::add.complex"}, kAllPositional, Q::Shape, "a + b on numbers, strings or lists"},
      {"operator.sub", K::Function, {"aten::sub.int", "aten::sub.complex"}, kAllPositional, Q::Shape, "a - b on numbers"},
      {"operator.mul", K::Function, {"aten::mul.int", "aten::mul.left_t", "aten::mul.right_", "aten::mul.complex"}, kAllPositional, Q::Shape, "a * b on numbers, l * n and n * l on lists ([0] * n)"},
      {"operator.truediv", K::Function, {"aten::div.int"}, kAllPositional, Q::Shape, "a / b on numbers"},
      {"operator.floordiv", K::Function, {"aten::floordiv.int"}, kAllPositional, Q::Shape, "a // b on numbers"},
      {"operator.mod", K::Function, {"aten::remainder.int", "aten::percentFormat"}, kAllPositional, Q::Shape, "a % b on numbers, \"%d\" % args (the lifter checks the text is Python's)"},
      {"operator.neg", K::Function, {"aten::neg.int", "aten::neg.complex"}, kAllPositional, Q::Shape, "-a on a number"},
      {"operator.lt", K::Function, {"aten::lt.int"}, kAllPositional, Q::Shape, "a < b on numbers"},
      {"operator.le", K::Function, {"aten::le.int"}, kAllPositional, Q::Shape, "a <= b on numbers"},
      {"operator.gt", K::Function, {"aten::gt.int"}, kAllPositional, Q::Shape, "a > b on numbers"},
      {"operator.ge", K::Function, {"aten::ge.int"}, kAllPositional, Q::Shape, "a >= b on numbers"},
      {"operator.eq", K::Function, {"aten::eq.int", "aten::eq.str", "aten::eq.device", "aten::eq.int_list", "aten::eq.bool_list", "aten::eq.str_list", "aten::eq.enum", "aten::eq.complex", "aten::eq.complex_float", "aten::eq.float_complex"}, kAllPositional, Q::Shape, "a == b on numbers, strings, devices, Enum members, lists of ints/bools/strings"},
      {"operator.ne", K::Function, {"aten::ne.int", "aten::ne.str", "aten::ne.device", "aten::ne.int_list", "aten::ne.bool_list", "aten::ne.str_list", "aten::ne.enum", "aten::ne.complex", "aten::ne.complex_float", "aten::ne.float_complex"}, kAllPositional, Q::Shape, "a != b on numbers, strings, devices, Enum members, lists of ints/bools/strings"},
      {"operator.not_", K::Function, {"aten::__not__"}, kAllPositional, Q::Shape, "not a"},
      {"operator.and_", K::Function, {"aten::__and__.bool"}, kAllPositional, Q::Shape, "a & b on bools/ints"},
      {"operator.or_", K::Function, {"aten::__or__.bool"}, kAllPositional, Q::Shape, "a | b on bools/ints"},
      {"operator.xor", K::Function, {"aten::__xor__.bool"}, kAllPositional, Q::Shape, "a ^ b on bools/ints"},
      {"operator.is_", K::Function, {"aten::__is__"}, kAllPositional, Q::Shape, "a is b (None checks)"},
      {"operator.is_not", K::Function, {"aten::__isnot__"}, kAllPositional, Q::Shape, "a is not b (None checks)"},
      // aten::select.t is TorchScript's other name of l[i] (the same listSelect).
      {"operator.getitem", K::Function, {"aten::__getitem__.t", "aten::select.t", "aten::__getitem__.str", "aten::__getitem__.Dict_str", "aten::__getitem__.Dict_int", "aten::__getitem__.Dict_bool", "aten::__getitem__.Dict_float", "aten::__getitem__.Dict_Tensor", "aten::__getitem__.Dict_complex"}, kAllPositional, Q::Shape, "a[i] on a list, tuple or str, d[k] on a dict"},
      {"sum", K::Function, {"aten::sum.int", "aten::sum.bool"}, kAllPositional, Q::Shape, "sum(l) on a list of ints or bools (Python's sum of floats compensates: aten::sum.float stays a torch.ops call)"},
      {"any", K::Function, {"aten::any.bool", "aten::any.int", "aten::any.float", "aten::any.str"}, kAllPositional, Q::Shape, "any(l) on a list"},
      {"all", K::Function, {"aten::all.bool", "aten::all.int", "aten::all.float"}, kAllPositional, Q::Shape, "all(l) on a list"},
      {"operator.contains", K::Function,
       {"aten::__contains__.str_list", "aten::__contains__.int_list", "aten::__contains__.float_list",
        "aten::__contains__.str", "aten::__contains__.int", "aten::__contains__.float",
        "aten::__contains__.bool", "aten::__contains__.Tensor", "aten::__contains__.complex"},
       kAllPositional, Q::Shape, "b in a (operator.contains(a, b)) on a list or dict"},
      {"len", K::Function, {"aten::len.t", "aten::len.str", "aten::len.Dict_str", "aten::len.Dict_int", "aten::len.Dict_bool", "aten::len.Dict_float", "aten::len.Dict_Tensor", "aten::len.Dict_complex"}, kAllPositional, Q::Shape, "len(list), len(str), len(dict) or len(tensor)"},
      // Ints only: on floats TorchScript's max(a, b) is `a if a > b else b` (max(1.0, nan) is nan),
      // Python's keeps a (those stay torch.ops.prim.max.float: Note [TorchScript builtins without
      // a row] in lib/loaders/torchscript/lifter_ops.cpp).
      {"max", K::Function, {"prim::max.int", "prim::max.self_int"}, kAllPositional, Q::Shape, "max(a, b), max(l) on ints"},
      {"min", K::Function, {"prim::min.int", "prim::min.self_int"}, kAllPositional, Q::Shape, "min(a, b), min(l) on ints"},
      // The lifter checks the text is Python's too (Note [Text of numbers] in lifter_ops.cpp).
      {"str", K::Function, {"aten::str"}, kAllPositional, Q::Shape, "str(x) of an int, bool, str, None or a list of them"},
      // Every tensor is on the CPU: x itself, as in TorchScript.
      {"Tensor.cpu", K::Method, {"aten::cpu"}, kAllPositional, Q::Native, "x.cpu()"},
      {"torch.as_tensor", K::Function, {"aten::as_tensor.list"}, {"", "dtype", "device"}, Q::Shape, "torch.as_tensor(list of numbers, dtype, device)"},
      {"math.floor", K::Function, {"aten::floor.float"}, kAllPositional, Q::Shape, "math.floor(x) -> int"},
      {"math.ceil", K::Function, {"aten::ceil.float"}, kAllPositional, Q::Shape, "math.ceil(x) -> int"},
      {"math.sqrt", K::Function, {"aten::sqrt.float"}, kAllPositional, Q::Shape, "math.sqrt(x)"},
      {"abs", K::Function, {"aten::abs.int", "prim::abs.complex"}, kAllPositional, Q::Shape, "abs(x) on a number"},
      // Complex numbers (Note [Complex scalars] in lib/ir/ir.h): only what Python computes to the same
      // bits as TorchScript has a row (z + w, z * w, z == 1.0, abs(z), ... above, these); mixed
      // int/float operands, division, pow, sum and the cmath functions stay torch.ops calls.
      // complex(a, b) of ints is not here: TorchScript's is not Python's beyond 2**53.
      {"complex", K::Function, {"aten::Complex.float_float", "aten::Complex.bool_bool", "aten::Complex.float_bool", "aten::Complex.bool_float"}, kAllPositional, Q::Shape, "complex(a, b) of floats or bools"},
      {"cmath.phase", K::Function, {"aten::angle.complex"}, kAllPositional, Q::Shape, "cmath.phase(z): the angle of a complex number"},
      {"cmath.isnan", K::Function, {"aten::isnan.complex"}, kAllPositional, Q::Shape, "cmath.isnan(z)"},
      {"cmath.isinf", K::Function, {"aten::isinf.complex"}, kAllPositional, Q::Shape, "cmath.isinf(z)"},
      {"cmath.isfinite", K::Function, {"aten::isfinite.complex"}, kAllPositional, Q::Shape, "cmath.isfinite(z)"},
      {"operator.pow", K::Function, {"aten::pow.int"}, kAllPositional, Q::Shape, "a ** b on numbers (a float, as in TorchScript)"},
      // TorchScript's lowering of `for i in range(lo, hi, step)`: a trip count and the loop
      // variable from the counter (register_prim_ops.cpp; exactly Python's range arithmetic). The
      // Python emitter writes the loop back (Note [Range loops in Python], control_flow.cpp).
      {"range.length", K::Function, {"aten::__range_length"}, kAllPositional, Q::Shape, "len(range(lo, hi, step))"},
      {"range.element", K::Function, {"aten::__derive_index"}, kAllPositional, Q::Shape, "start + index * step: item `index` of range(start, hi, step)"},
      // Tensor attributes: the Python emitter writes x.dtype (no call); dispatch.cpp evaluates them.
      {"Tensor.dtype", K::Method, {"prim::dtype"}, kAllPositional, Q::Shape, "x.dtype"},
      {"Tensor.device", K::Method, {"prim::device"}, kAllPositional, Q::Shape, "x.device"},
      {"Tensor.is_nested", K::Method, {"prim::is_nested"}, kAllPositional, Q::Shape, "x.is_nested"},
      {"Tensor.is_cuda", K::Method, {"prim::is_cuda"}, kAllPositional, Q::Shape, "x.is_cuda"},
      // torch 2.x's nn.MultiheadAttention/TransformerEncoder check x.device.type (1.13: str(x.device)).
      {"Tensor.requires_grad", K::Method, {"prim::requires_grad"}, kAllPositional, Q::Shape, "x.requires_grad"},
      {"Device.type", K::Method, {"prim::type"}, kAllPositional, Q::Shape, "device.type"},
      // Note [Enum types] (ir/ir.h): attributes of an Enum member, as TorchScript's registry reads them.
      {"Enum.name", K::Method, {"prim::EnumName"}, kAllPositional, Q::Shape, "member.name of an Enum"},
      {"Enum.value", K::Method, {"prim::EnumValue.int", "prim::EnumValue.float", "prim::EnumValue.str"}, kAllPositional, Q::Shape, "member.value of an Enum"},
      // prim::tolist(x, dim, elem_type): the lifter keeps x only (TorchScript checks the other two).
      {"Tensor.tolist", K::Method, {"prim::tolist"}, kAllPositional, Q::Shape, "x.tolist(): nested lists of Python numbers"},
      {"list.slice", K::Function, {"aten::slice.t", "aten::slice.str"}, kAllPositional, Q::Shape, "l[start:end:step] on a list or str (x.shape[-3:])"},
      {"list", K::Function, {"aten::list.t", "aten::copy.t"}, kAllPositional, Q::Shape, "list(l), l.copy(): a new list"},
      // Dict readers. keys/values/items are new lists in TorchScript (a snapshot, indexable):
      // the Python emitter writes list(d.keys()) (Note [Dict views in Python], calls.cpp).
      {"dict.keys", K::Method, {"aten::keys.str", "aten::keys.int", "aten::keys.bool", "aten::keys.float", "aten::keys.Tensor", "aten::keys.complex"}, kAllPositional, Q::Shape, "list(d.keys())"},
      {"dict.values", K::Method, {"aten::values.str", "aten::values.int", "aten::values.bool", "aten::values.float", "aten::values.Tensor", "aten::values.complex"}, kAllPositional, Q::Shape, "list(d.values())"},
      {"dict.items", K::Method, {"aten::items.str", "aten::items.int", "aten::items.bool", "aten::items.float", "aten::items.Tensor", "aten::items.complex"}, kAllPositional, Q::Shape, "list(d.items()): (key, value) tuples"},
      {"dict.get", K::Method, {"aten::get.str", "aten::get.int", "aten::get.bool", "aten::get.float", "aten::get.Tensor", "aten::get.default_str", "aten::get.default_int", "aten::get.default_bool", "aten::get.default_float", "aten::get.default_Tensor", "aten::get.complex", "aten::get.default_complex"}, kAllPositional, Q::Shape, "d.get(k[, default])"},
      {"dict", K::Function, {"aten::dict", "aten::dict.str", "aten::dict.Dict_str", "aten::dict.int", "aten::dict.Dict_int", "aten::dict.bool", "aten::dict.Dict_bool", "aten::dict.float", "aten::dict.Dict_float", "aten::dict.Tensor", "aten::dict.Dict_Tensor", "aten::dict.complex", "aten::dict.Dict_complex"}, kAllPositional, Q::Shape, "dict(), dict(d), dict(pairs): a new dict of the same objects"},
      {"dict.copy", K::Method, {"aten::copy.Dict_str", "aten::copy.Dict_int", "aten::copy.Dict_bool", "aten::copy.Dict_float", "aten::copy.Dict_Tensor", "aten::copy.Dict_complex"}, kAllPositional, Q::Shape, "d.copy(): a new dict of the same objects"},
      // Container mutation (Note [Container mutation] in lib/exec/alias.h): effects in program order.
      {"list.append", K::Method, {"aten::append.t"}, kAllPositional, Q::Shape, "l.append(x)"},
      {"list.extend", K::Method, {"aten::extend.t", "aten::add_.t"}, kAllPositional, Q::Shape, "l.extend(m), l += m"},
      {"list.insert", K::Method, {"aten::insert.t"}, kAllPositional, Q::Shape, "l.insert(i, x)"},
      {"list.pop", K::Method, {"aten::pop.t"}, kAllPositional, Q::Shape, "l.pop(i)"},
      {"list.remove", K::Method, {"aten::remove.int", "aten::remove.float", "aten::remove.bool", "aten::remove.Tensor", "aten::remove.str"}, kAllPositional, Q::Shape, "l.remove(x)"},
      {"list.clear", K::Method, {"aten::clear.t"}, kAllPositional, Q::Shape, "l.clear()"},
      {"list.reverse", K::Method, {"aten::reverse.t"}, kAllPositional, Q::Shape, "l.reverse()"},
      // Ints, bools and strings, and tuples of them (the .any overloads): TorchScript orders floats
      // with `<` (NaN anywhere), Python's sort otherwise; tensors not at all alike (the lifter
      // refuses those lists: Note [Orders Python shares], lifter_control.cpp).
      {"sorted", K::Function, {"aten::sorted.int", "aten::sorted.bool", "aten::sorted.str", "aten::sorted.any"}, kAllPositional, Q::Shape, "sorted(l): a new sorted list"},
      {"list.sort", K::Method, {"aten::sort.int", "aten::sort.bool", "aten::sort.str", "aten::sort.any"}, {"", "reverse"}, Q::Shape, "l.sort(reverse=False)"},
      {"operator.imul", K::Function, {"aten::mul_.t"}, kAllPositional, Q::Shape, "l *= n on a list (in place)"},
      {"dict.pop", K::Method, {"aten::pop.Dict_str", "aten::pop.Dict_int", "aten::pop.Dict_bool", "aten::pop.Dict_float", "aten::pop.Dict_Tensor", "aten::pop.Dict_default_str", "aten::pop.Dict_default_int", "aten::pop.Dict_default_bool", "aten::pop.Dict_default_float", "aten::pop.Dict_default_Tensor", "aten::pop.Dict_complex", "aten::pop.Dict_default_complex"}, kAllPositional, Q::Shape, "d.pop(k[, default])"},
      {"dict.clear", K::Method, {"aten::clear.str", "aten::clear.int", "aten::clear.bool", "aten::clear.float", "aten::clear.Tensor", "aten::clear.complex"}, kAllPositional, Q::Shape, "d.clear()"},
      {"dict.setdefault", K::Method, {"aten::setdefault.str", "aten::setdefault.int", "aten::setdefault.bool", "aten::setdefault.float", "aten::setdefault.Tensor", "aten::setdefault.complex"}, kAllPositional, Q::Shape, "d.setdefault(k, v)"},
      {"dict.update", K::Method, {"aten::update.str", "aten::update.int", "aten::update.bool", "aten::update.float", "aten::update.Tensor", "aten::update.complex"}, kAllPositional, Q::Shape, "d.update(e)"},
      {"operator.setitem", K::Function, {"aten::_set_item.t", "aten::_set_item.str", "aten::_set_item.int", "aten::_set_item.bool", "aten::_set_item.float", "aten::_set_item.Tensor", "aten::_set_item.complex"}, kAllPositional, Q::Shape, "l[i] = v, d[k] = v"},
      {"operator.delitem", K::Function, {"aten::Delete.t", "aten::Delete.Dict_str", "aten::Delete.Dict_int", "aten::Delete.Dict_bool", "aten::Delete.Dict_float", "aten::Delete.Dict_Tensor", "aten::Delete.Dict_complex"}, kAllPositional, Q::Shape, "del l[i], del d[k]"},
      {"torch.is_autocast_enabled", K::Function, {"aten::is_autocast_enabled"}, kAllPositional, Q::Shape, "torch.is_autocast_enabled() (False in the interpreter)"},
      {"torch.is_autocast_cpu_enabled", K::Function, {"aten::is_autocast_cpu_enabled"}, kAllPositional, Q::Shape, "torch.is_autocast_cpu_enabled() (False in the interpreter)"},
      // torch 2.x's scripted nn.TransformerEncoder picks its fast path with it; both paths compute
      // the same values.
      {"torch.is_grad_enabled", K::Function, {"aten::is_grad_enabled"}, kAllPositional, Q::Shape, "torch.is_grad_enabled() (as the interpreter runs)"},
      // An effect on autograd's state (no result): `with torch.no_grad():` in a scripted forward
      // (Note [with statements] in lib/loaders/torchscript/lifter_objects.cpp).
      {"torch.set_grad_enabled", K::Function, {"aten::set_grad_enabled"}, kAllPositional, Q::Shape, "torch.set_grad_enabled(mode)"},
      {"str.format", K::Method, {"aten::format"}, kAllPositional, Q::Shape, "\"...{}\".format(args) (a message)"},
      // An effect on the global generator (no result; kMutatesByName keeps it in program order,
      // and random ops are never moved across it: is_nondeterministic, passes/pass_util.cpp).
      {"torch.manual_seed", K::Function, {"aten::manual_seed"}, kAllPositional, Q::Shape, "torch.manual_seed(seed)"},
      // A torch.Generator object and its effects (Note [Generator values] in ir/ir.h): every node
      // with a Generator input is an ordered effect (has_side_effects, passes/pass_util.cpp).
      // Python's torch.Generator has no seed parameter: the lifter writes a seed as g.manual_seed.
      {"torch.Generator", K::Function, {"aten::Generator"}, {"device", "="}, Q::Shape, "torch.Generator(device)"},
      {"Generator.manual_seed", K::Method, {"aten::manual_seed.generator"}, kAllPositional, Q::Shape, "g.manual_seed(seed) (returns g)"},
      // Python's g.seed() / g.initial_seed() answer the seed unsigned, TorchScript's signed (a
      // seed >= 2**63, as g.seed() draws half the time, is negative): written torch.ops.aten.seed(g)
      // (call forms in op_python.cpp), which answers as TorchScript does.
      {"Generator.seed", K::Method, {"aten::seed"}, kAllPositional, Q::Shape, "torch.ops.aten.seed(g)"},
      {"Generator.initial_seed", K::Method, {"aten::initial_seed"}, kAllPositional, Q::Shape, "torch.ops.aten.initial_seed(g)"},
      // Reads autocast's state of the running process (never folded: is_nondeterministic); a
      // dtype, which the Python emitter writes as torch's (as x.dtype).
      {"torch.get_autocast_dtype", K::Function, {"aten::get_autocast_dtype"}, kAllPositional, Q::Shape, "torch.get_autocast_dtype(device_type)"},
      // Reads the running machine (never folded while converting: is_nondeterministic).
      {"torch._C._get_cpu_capability", K::Function, {"aten::_get_cpu_capability"}, kAllPositional, Q::Shape, "torch._C._get_cpu_capability(): \"AVX2\", \"DEFAULT\", ..."},

      // ---------------------------------------------------------------------------------------
      // dtype / memory
      // to.device and to.dtype_layout are normalised to to.dtype by the loader (CPU only).
      {"Tensor.to", K::Method, {"aten::to.dtype", "aten::to.other"}, {"", "", "", "", "memory_format"}, Q::Float, "x.to(dtype or other, non_blocking, copy)"},
      // A device known only at run time (x.to(y.device)): written through its call form (Note
      // [Python call forms]); the loader gives it a constant torch dtype or keeps the ATen call.
      {"Tensor.to_device", K::Method, {"aten::to.prim_Device"}, kAllPositional, Q::Float, "x.to(device, dtype, non_blocking, copy) for a run-time device"},
      {"Tensor.type_as", K::Method, {"aten::type_as"}, kAllPositional, Q::Native, "x.type_as(other)"},
      {"Tensor.detach", K::Method, {"aten::detach"}, kAllPositional, Q::Native, "x.detach()"},
      {"Tensor.clone", K::Method, {"aten::clone"}, {"", "memory_format"}, Q::Native, "x.clone()"},

      // ---------------------------------------------------------------------------------------
      // factories
      {"torch.zeros", K::Function, {"aten::zeros"}, {"", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "zeros(size)"},
      {"torch.ones", K::Function, {"aten::ones"}, {"", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "ones(size)"},
      {"torch.full", K::Function, {"aten::full"}, {"", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "full(size, fill_value)"},
      // aten::arange and arange.start are normalised to start_step by the loader.
      {"torch.arange", K::Function, {"aten::arange.start_step"}, {"", "", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "arange(start, end, step)"},
      {"torch.zeros_like", K::Function, {"aten::zeros_like"}, {"", "dtype", "layout", "device", "pin_memory", "memory_format"}, Q::Float, "zeros_like(input)"},
      {"torch.ones_like", K::Function, {"aten::ones_like"}, {"", "dtype", "layout", "device", "pin_memory", "memory_format"}, Q::Float, "ones_like(input)"},
      {"torch.full_like", K::Function, {"aten::full_like"}, {"", "", "dtype", "layout", "device", "pin_memory", "memory_format"}, Q::Float, "full_like(input, fill_value)"},
      // torch.tensor of scripted models (TorchScript-only overloads): `x[a:b] = 0.5` is
      // x[a:b].copy_(torch.tensor(0.5, dtype=x.dtype, device=x.device)) there.
      {"torch.tensor", K::Function, {"aten::tensor.int", "aten::tensor.float", "aten::tensor.bool", "aten::tensor"}, {"", "dtype", "device", "requires_grad"}, Q::Shape, "torch.tensor(number or nested list of numbers, dtype, device)"},
      {"Tensor.new_zeros", K::Method, {"aten::new_zeros"}, {"", "", "dtype", "layout", "device", "pin_memory"}, Q::Float, "x.new_zeros(size)"},
      {"Tensor.new_ones", K::Method, {"aten::new_ones"}, {"", "", "dtype", "layout", "device", "pin_memory"}, Q::Float, "x.new_ones(size)"},
      {"Tensor.new_full", K::Method, {"aten::new_full"}, {"", "", "", "dtype", "layout", "device", "pin_memory"}, Q::Float, "x.new_full(size, fill_value)"},

      // ---------------------------------------------------------------------------------------
      // ops of Python packages' op libraries (Note [Op libraries] in ir/model.h): the package's
      // Python function where it calls the op with the same arguments; the generated code
      // imports the package, which registers the ops. Other ops of these libraries are written
      // torch.ops.<ns>.<op>(...).
      {"torchvision.ops.nms", K::Function, {"torchvision::nms"}, kAllPositional, Q::Float, "torchvision.ops.nms(boxes, scores, iou_threshold)"},
      // Written through their call forms (Note [Python call forms] in op_table.h).
      {"torchvision.ops.roi_align", K::Function, {"torchvision::roi_align"}, kAllPositional, Q::Float, "torchvision.ops.roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned)"},
      {"torchvision.ops.roi_pool", K::Function, {"torchvision::roi_pool"}, kAllPositional, Q::Float, "torchvision.ops.roi_pool(input, boxes, output_size, spatial_scale)"},
      {"torchvision.ops.ps_roi_align", K::Function, {"torchvision::ps_roi_align"}, kAllPositional, Q::Float, "torchvision.ops.ps_roi_align(input, boxes, output_size, spatial_scale, sampling_ratio)"},
      {"torchvision.ops.ps_roi_pool", K::Function, {"torchvision::ps_roi_pool"}, kAllPositional, Q::Float, "torchvision.ops.ps_roi_pool(input, boxes, output_size, spatial_scale)"},
  };
  // clang-format on
  detail::add_aten_rows(t);
  add_facts(t);
  return t;
}

// Rows that find_op_by_aten must not return because their inputs are not the ATen layout.
bool aten_indexable(const OpInfo& op) {
  return (op.kind == OpKind::Function || op.kind == OpKind::Method) &&
         !(op.facts & kInputsNotAtenOrder);
}

struct Index {
  std::unordered_map<std::string_view, const OpInfo*> by_name;
  std::unordered_map<std::string, const OpInfo*> by_aten;
};

const Index& index() {
  static const Index idx = [] {
    Index i;
    for (const OpInfo& op : all_ops()) {
      i.by_name.emplace(op.name, &op);
      if (!aten_indexable(op)) continue;
      for (const std::string& a : op.aten) i.by_aten.emplace(a, &op);
    }
    return i;
  }();
  return idx;
}

}  // namespace

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> table = make_table();
  return table;
}

const OpInfo* find_op(std::string_view name) {
  const auto& m = index().by_name;
  auto it = m.find(name);
  return it == m.end() ? nullptr : it->second;
}

const OpInfo* find_op_by_aten(std::string_view aten_overload) {
  // Split "aten::add_.Tensor" into name "aten::add_" and overload "Tensor".
  std::string_view name = aten_overload, overload;
  size_t ns = aten_overload.find("::");
  size_t dot = aten_overload.find('.', ns == std::string_view::npos ? 0 : ns + 2);
  if (dot != std::string_view::npos) {
    name = aten_overload.substr(0, dot);
    overload = aten_overload.substr(dot + 1);
  }
  if (overload == "default") overload = {};
  auto lookup = [&](std::string_view n) -> const OpInfo* {
    std::string key(n);
    if (!overload.empty()) key += "." + std::string(overload);
    const auto& m = index().by_aten;
    auto it = m.find(key);
    return it == m.end() ? nullptr : it->second;
  };
  if (const OpInfo* op = lookup(name)) return op;
  // In-place variant "aten::relu_" -> "aten::relu" (but not dunder names like "aten::__and__").
  if (name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_')
    return lookup(name.substr(0, name.size() - 1));
  return nullptr;
}

bool is_tensor_inplace_method(std::string_view name) {
  // The in-place data methods of torch.Tensor (torch 1.13 and 2.x); shape-changing ones
  // (unsqueeze_, t_, resize_, ...) are left out: the loaders refuse those on shared tensors.
  // clang-format off
  static const std::unordered_set<std::string_view> methods = {
      "abs_", "absolute_", "acos_", "acosh_", "add_", "addbmm_", "addcdiv_", "addcmul_", "addmm_",
      "addmv_", "addr_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan2_", "arctan_",
      "arctanh_", "asin_", "asinh_", "atan2_", "atan_", "atanh_", "baddbmm_", "bernoulli_",
      "bitwise_and_", "bitwise_left_shift_", "bitwise_not_", "bitwise_or_", "bitwise_right_shift_",
      "bitwise_xor_", "cauchy_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
      "conj_physical_", "copy_", "copysign_", "cos_", "cosh_", "cumprod_", "cumsum_", "deg2rad_",
      "digamma_", "div_", "divide_", "eq_", "erf_", "erfc_", "erfinv_", "exp2_", "exp_", "expm1_",
      "exponential_", "fill_", "fill_diagonal_", "fix_", "float_power_", "floor_", "floor_divide_",
      "fmod_", "frac_", "gcd_", "ge_", "geometric_", "greater_", "greater_equal_", "gt_",
      "heaviside_", "hypot_", "i0_", "igamma_", "igammac_", "index_add_", "index_copy_",
      "index_fill_", "index_put_", "index_reduce_", "lcm_", "ldexp_", "le_", "lerp_", "less_",
      "less_equal_", "lgamma_", "log10_", "log1p_", "log2_", "log_", "log_normal_", "logical_and_",
      "logical_not_", "logical_or_", "logical_xor_", "logit_", "lt_", "masked_fill_",
      "masked_scatter_", "mul_", "multiply_", "mvlgamma_", "nan_to_num_", "ne_", "neg_",
      "negative_", "nextafter_", "normal_", "not_equal_", "polygamma_", "pow_", "put_", "rad2deg_",
      "random_", "reciprocal_", "relu_", "remainder_", "renorm_", "round_", "rsqrt_", "scatter_",
      "scatter_add_", "scatter_reduce_", "sgn_", "sigmoid_", "sign_", "sin_", "sinc_", "sinh_",
      "sqrt_", "square_", "sub_", "subtract_", "tan_", "tanh_", "tril_", "triu_", "true_divide_",
      "trunc_", "uniform_", "xlogy_", "zero_"};
  // clang-format on
  return methods.count(name) != 0;
}

bool is_aten_fallback(std::string_view op) {
  return op.substr(0, 6) == "aten::" && find_op(op) == nullptr;
}

std::string_view tensor_inplace_method_of(std::string_view aten_op) {
  if (aten_op.substr(0, 6) != "aten::") return {};
  std::string_view name = aten_op.substr(6);
  name = name.substr(0, name.find('.'));
  return is_tensor_inplace_method(name) ? name : std::string_view{};
}

std::string_view functional_inplace_of(std::string_view aten_op) {
  if (aten_op.substr(0, 6) != "aten::") return {};
  std::string_view name = aten_op.substr(6);
  name = name.substr(0, name.find('.'));
  // torch.nn.functional's in-place activations (torch 1.13 and 2.x): each is the ATen op of its
  // name (torch._C._nn.elu_, torch.celu_, _VF.threshold_, ...), positional arguments alike.
  static const std::unordered_set<std::string_view> functions = {
      "celu_", "elu_", "hardtanh_", "leaky_relu_", "rrelu_", "selu_", "threshold_"};
  // Only reachable as F.NAME(x, inplace=True) (torch._C._nn.NAME_, the input its only argument).
  static const std::unordered_set<std::string_view> inplace_flag = {"hardsigmoid_", "hardswish_",
                                                                    "mish_", "silu_"};
  if (functions.count(name)) return name;
  if (inplace_flag.count(name)) return name.substr(0, name.size() - 1);
  return {};
}

bool python_spells_fallback(std::string_view op) {
  return op == "aten::index.Tensor" || !tensor_inplace_method_of(op).empty() ||
         !functional_inplace_of(op).empty();
}

bool written_as_torch_ops(std::string_view op) {
  return is_aten_fallback(op) && !python_spells_fallback(op);
}

}  // namespace tt

namespace tt {

bool op_has(const Node& n, OpFact f) {
  const OpInfo* info = n.info();
  return info && (info->facts & f) != 0;
}

std::string state_path(const Node& n) {
  std::string module = n.attrs().get_str("module");
  std::string name = n.attrs().get_str("name");
  return module.empty() ? name : module + "." + name;
}

bool op_has(std::string_view op, OpFact f) {
  const OpInfo* info = find_op(op);
  return info && (info->facts & f) != 0;
}

const std::vector<const OpInfo*>& functional_module_rows() {
  static const std::vector<const OpInfo*> rows = [] {
    std::vector<const OpInfo*> r;
    for (const OpInfo& op : all_ops())
      if (!op.functional_aten.empty()) r.push_back(&op);
    return r;
  }();
  return rows;
}

bool aten_has(std::string_view name, AtenFact f) {
  // Note [Op facts]: ATen ops by name (no namespace, no overload), with or without a row.
  static const std::unordered_map<std::string_view, uint32_t> facts = [] {
    std::unordered_map<std::string_view, uint32_t> m;
    auto add = [&](std::initializer_list<const char*> names, AtenFact fact) {
      for (const char* n : names) m[n] |= fact;
    };
    // clang-format off
    add({"append", "insert", "pop", "remove", "clear", "extend", "_set_item", "__setitem__",
         "__delitem__", "setdefault", "update", "popitem", "warn", "print", "manual_seed", "seed",
         "backward", "set_grad_enabled", "_assert_async", "Delete", "reverse", "sort_list"},
        kMutatesByName);
    add({"rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
         "bernoulli", "normal", "multinomial", "poisson", "binomial", "rrelu_with_noise",
         "native_dropout", "uniform", "exponential", "geometric", "cauchy", "log_normal", "random",
         "Generator", "initial_seed",
         "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "_standard_gamma",
         "_sample_dirichlet"},
        kRandom);
    add({"resize_", "resize_as_", "set_", "as_strided_", "squeeze_", "unsqueeze_", "t_", "transpose_",
         "swapaxes_", "swapdims_", "detach_", "requires_grad_", "rename_", "resize_as_sparse_",
         "sparse_resize_", "sparse_resize_and_clear_"},
        kMetadataInplace);
    add({"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "type_as",
         "sum_to_size", "atleast_1d", "atleast_2d", "atleast_3d", "einsum", "align_as", "align_to",
         "refine_names", "rename", "lift_fresh", "_autocast_to_reduced_precision",
         "_autocast_to_full_precision", "data", "dequantize"},  // dequantize of a float tensor
        kReturnsInputSometimes);
    add({"argmax", "argmin", "eq", "ne", "gt", "ge", "lt", "le", "logical_not", "logical_and",
         "logical_or", "isnan", "nonzero", "arange", "argsort", "bucketize", "searchsorted",
         "greater", "greater_equal", "less", "less_equal", "not_equal", "logical_xor", "isinf",
         "isfinite", "isposinf", "isneginf", "isreal", "isin", "isclose", "signbit", "argwhere",
         "count_nonzero", "bincount", "tril_indices", "triu_indices", "one_hot"},
        kNonFloatResult);
    add({"topk", "sort", "kthvalue", "mode", "median", "nanmedian", "max", "min", "cummax", "cummin",
         "frexp"},
        kIndicesSecond);
    // clang-format on
    return m;
  }();
  auto it = facts.find(name);
  return it != facts.end() && (it->second & f) != 0;
}

bool aten_base_has(std::string_view base, AtenFact f) {
  return base.substr(0, 6) == "aten::" && aten_has(base.substr(6), f);
}

}  // namespace tt
