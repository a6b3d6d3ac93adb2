// How ops are written in Python, beside their rows in op_table.cpp (declared in op_table.h):
// constructor and function signatures (Note [Python signatures]), the Python operators of
// operator.* and tensor ops, attribute reads and slices.
#include "ir/op_table.h"
#include "ir/py_helpers.h"

#include <cctype>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace tt {

namespace {

// Module ops: torch.nn constructor signatures, generated from inspect.signature of torch 1.13
// (loss modules and containers left out). Function rows: the parameters their py_args name.
// clang-format off
// (One signature per line, as inspect.signature prints it.)
const std::pair<const char*, const char*> kSignatures[] = {
    {"nn.AdaptiveAvgPool1d", "output_size"},
    {"nn.AdaptiveAvgPool2d", "output_size"},
    {"nn.AdaptiveAvgPool3d", "output_size"},
    {"nn.AdaptiveMaxPool1d", "output_size, return_indices=False"},
    {"nn.AdaptiveMaxPool2d", "output_size, return_indices=False"},
    {"nn.AdaptiveMaxPool3d", "output_size, return_indices=False"},
    {"nn.AlphaDropout", "p=0.5, inplace=False"},
    {"nn.AvgPool1d", "kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True"},
    {"nn.AvgPool2d", "kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None"},
    {"nn.AvgPool3d", "kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None"},
    {"nn.BatchNorm1d", "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None"},
    {"nn.BatchNorm2d", "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None"},
    {"nn.BatchNorm3d", "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None"},
    {"nn.Bilinear", "in1_features, in2_features, out_features, bias=True, device=None, dtype=None"},
    {"nn.CELU", "alpha=1.0, inplace=False"},
    {"nn.ChannelShuffle", "groups"},
    {"nn.ConstantPad1d", "padding, value"},
    {"nn.ConstantPad2d", "padding, value"},
    {"nn.ConstantPad3d", "padding, value"},
    {"nn.Conv1d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nn.Conv2d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nn.Conv3d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nn.ConvTranspose1d", "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nn.ConvTranspose2d", "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nn.ConvTranspose3d", "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nn.CosineSimilarity", "dim=1, eps=1e-08"},
    {"nn.CrossMapLRN2d", "size, alpha=0.0001, beta=0.75, k=1"},
    {"nn.Dropout", "p=0.5, inplace=False"},
    {"nn.Dropout1d", "p=0.5, inplace=False"},
    {"nn.Dropout2d", "p=0.5, inplace=False"},
    {"nn.Dropout3d", "p=0.5, inplace=False"},
    {"nn.ELU", "alpha=1.0, inplace=False"},
    {"nn.Embedding", "num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False, device=None, dtype=None"},
    {"nn.EmbeddingBag", "num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, mode=\"mean\", sparse=False, include_last_offset=False, padding_idx=None, device=None, dtype=None"},
    {"nn.FeatureAlphaDropout", "p=0.5, inplace=False"},
    {"nn.Flatten", "start_dim=1, end_dim=-1"},
    {"nn.Fold", "output_size, kernel_size, dilation=1, padding=0, stride=1"},
    {"nn.FractionalMaxPool2d", "kernel_size, output_size=None, output_ratio=None, return_indices=False"},
    {"nn.FractionalMaxPool3d", "kernel_size, output_size=None, output_ratio=None, return_indices=False"},
    {"nn.GELU", "approximate=\"none\""},
    {"nn.GLU", "dim=-1"},
    {"nn.GRUCell", "input_size, hidden_size, bias=True, device=None, dtype=None"},
    {"nn.GroupNorm", "num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None"},
    {"nn.Hardshrink", "lambd=0.5"},
    {"nn.Hardsigmoid", "inplace=False"},
    {"nn.Hardswish", "inplace=False"},
    {"nn.Hardtanh", "min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None"},
    {"nn.InstanceNorm1d", "num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None, dtype=None"},
    {"nn.InstanceNorm2d", "num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None, dtype=None"},
    {"nn.InstanceNorm3d", "num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None, dtype=None"},
    {"nn.LPPool1d", "norm_type, kernel_size, stride=None, ceil_mode=False"},
    {"nn.LPPool2d", "norm_type, kernel_size, stride=None, ceil_mode=False"},
    {"nn.LSTMCell", "input_size, hidden_size, bias=True, device=None, dtype=None"},
    {"nn.LayerNorm", "normalized_shape, eps=1e-05, elementwise_affine=True, device=None, dtype=None"},
    {"nn.LeakyReLU", "negative_slope=0.01, inplace=False"},
    {"nn.TransformerEncoderLayer", "d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=\"relu\", layer_norm_eps=1e-05, batch_first=False, norm_first=False, bias=True, device=None, dtype=None"},
    {"nn.RMSNorm", "normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None"},
    {"nn.Linear", "in_features, out_features, bias=True, device=None, dtype=None"},
    {"nn.LocalResponseNorm", "size, alpha=0.0001, beta=0.75, k=1.0"},
    {"nn.LogSigmoid", ""},
    {"nn.LogSoftmax", "dim=None"},
    {"nn.MaxPool1d", "kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False"},
    {"nn.MaxPool2d", "kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False"},
    {"nn.MaxPool3d", "kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False"},
    {"nn.MaxUnpool1d", "kernel_size, stride=None, padding=0"},
    {"nn.MaxUnpool2d", "kernel_size, stride=None, padding=0"},
    {"nn.MaxUnpool3d", "kernel_size, stride=None, padding=0"},
    {"nn.Mish", "inplace=False"},
    {"nn.MultiheadAttention", "embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None"},
    {"nn.PReLU", "num_parameters=1, init=0.25, device=None, dtype=None"},
    {"nn.PairwiseDistance", "p=2.0, eps=1e-06, keepdim=False"},
    {"nn.PixelShuffle", "upscale_factor"},
    {"nn.PixelUnshuffle", "downscale_factor"},
    {"nn.RNNCell", "input_size, hidden_size, bias=True, nonlinearity=\"tanh\", device=None, dtype=None"},
    {"nn.RReLU", "lower=0.125, upper=0.3333333333333333, inplace=False"},
    {"nn.ReLU", "inplace=False"},
    {"nn.ReLU6", "inplace=False"},
    {"nn.ReflectionPad1d", "padding"},
    {"nn.ReflectionPad2d", "padding"},
    {"nn.ReflectionPad3d", "padding"},
    {"nn.ReplicationPad1d", "padding"},
    {"nn.ReplicationPad2d", "padding"},
    {"nn.ReplicationPad3d", "padding"},
    {"nn.SELU", "inplace=False"},
    {"nn.SiLU", "inplace=False"},
    {"nn.Sigmoid", ""},
    {"nn.Softmax", "dim=None"},
    {"nn.Softmax2d", ""},
    {"nn.Softmin", "dim=None"},
    {"nn.Softplus", "beta=1, threshold=20"},
    {"nn.Softshrink", "lambd=0.5"},
    {"nn.Softsign", ""},
    {"nn.SyncBatchNorm", "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, process_group=None, device=None, dtype=None"},
    {"nn.Tanh", ""},
    {"nn.Tanhshrink", ""},
    {"nn.Threshold", "threshold, value, inplace=False"},
    {"nn.Unflatten", "dim, unflattened_size"},
    {"nn.Unfold", "kernel_size, dilation=1, padding=0, stride=1"},
    {"nn.Upsample", "size=None, scale_factor=None, mode=\"nearest\", align_corners=None, recompute_scale_factor=None"},
    {"nn.UpsamplingBilinear2d", "size=None, scale_factor=None"},
    {"nn.UpsamplingNearest2d", "size=None, scale_factor=None"},
    {"nn.ZeroPad2d", "padding"},
    {"nn.Identity", ""},
    {"nn.RNN",
     "input_size, hidden_size, num_layers=1, nonlinearity=\"tanh\", bias=True, "
     "batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None"},
    {"nn.LSTM",
     "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
     "bidirectional=False, proj_size=0, device=None, dtype=None"},
    {"nn.GRU",
     "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
     "bidirectional=False, device=None, dtype=None"},
    // torch.ao.nn.quantized (nnq), .intrinsic.quantized (nniq), .quantized.dynamic (nnqd):
    // Note [Quantized modules] in lib/loaders/torchscript/lifter_quantized.cpp.
    {"nnq.Quantize", "scale, zero_point, dtype"},
    {"nnq.DeQuantize", ""},
    {"nnq.Conv1d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nnq.Conv2d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nnq.Conv3d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nnq.ConvTranspose1d", "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nnq.ConvTranspose2d", "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode=\"zeros\", device=None, dtype=None"},
    {"nniq.ConvReLU1d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\""},
    {"nniq.ConvReLU2d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\""},
    {"nniq.ConvReLU3d", "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode=\"zeros\""},
    {"nnq.Linear", "in_features, out_features, bias_=True, dtype=torch.qint8"},
    {"nniq.LinearReLU", "in_features, out_features, bias=True, dtype=torch.qint8"},
    {"nnqd.Linear", "in_features, out_features, bias_=True, dtype=torch.qint8"},
    {"nnqd.LSTM", "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False, dtype=torch.qint8"},
    {"nnqd.GRU", "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False, dtype=torch.qint8"},
    {"nnq.BatchNorm2d", "num_features, eps=1e-05, momentum=0.1, device=None, dtype=None"},
    {"nnq.Embedding", "num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None, dtype=torch.quint8"},
    {"nnq.EmbeddingBag", "num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, mode=\"sum\", sparse=False, _weight=None, include_last_offset=False, dtype=torch.quint8"},
    {"nnq.BatchNorm3d", "num_features, eps=1e-05, momentum=0.1, device=None, dtype=None"},
    {"nniq.BNReLU2d", "num_features, eps=1e-05, momentum=0.1, device=None, dtype=None"},
    {"nniq.BNReLU3d", "num_features, eps=1e-05, momentum=0.1, device=None, dtype=None"},
    {"nnq.Hardswish", "scale, zero_point, device=None, dtype=None"},
    {"nnq.ELU", "scale, zero_point, alpha=1.0"},
    {"nnq.LeakyReLU", "scale, zero_point, negative_slope=0.01, inplace=False, device=None, dtype=None"},
    {"nnq.Sigmoid", "output_scale, output_zero_point"},
    {"nnq.ReLU6", "inplace=False"},
    {"nnq.Softmax", "dim=None, scale=1.0, zero_point=0"},
    {"nnq.Dropout", "p=0.5, inplace=False"},
    // Function rows (Note [Python signatures]): F.interpolate's inputs are its Python
    // parameters; torch.tensor's overloads are TorchScript-only (no dispatcher schema).
    {"F.interpolate", "input, size=None, scale_factor=None, mode=\"nearest\", align_corners=None, antialias=False"},
    {"torch.tensor", "data, dtype=None, device=None, requires_grad=False"},
    // Rows whose keyword defaults are Python's, not the ATen overload's (op_table_aten.cpp):
    // the windows and torch.stft are normalised to an overload without defaults; F.unfold and
    // F.fold take ints where ATen takes pairs.
    {"torch.hann_window", "window_length, periodic=True, dtype=None, layout=None, device=None, pin_memory=False"},
    {"torch.hamming_window", "window_length, periodic=True, alpha=0.54, beta=0.46, dtype=None, layout=None, device=None, pin_memory=False"},
    {"torch.blackman_window", "window_length, periodic=True, dtype=None, layout=None, device=None, pin_memory=False"},
    {"torch.bartlett_window", "window_length, periodic=True, dtype=None, layout=None, device=None, pin_memory=False"},
    {"torch.kaiser_window", "window_length, periodic=True, beta=12.0, dtype=None, layout=None, device=None, pin_memory=False"},
    {"torch.stft", "input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode=\"reflect\", normalized=False, onesided=None, return_complex=None"},
    {"F.unfold", "input, kernel_size, dilation=1, padding=0, stride=1"},
    {"F.fold", "input, output_size, kernel_size, dilation=1, padding=0, stride=1"},
    // Rows with Python enums (Note [Python enums]): their string defaults.
    {"F.grid_sample", "input, grid, mode=\"bilinear\", padding_mode=\"zeros\", align_corners=None"},
    {"torch.cdist", "x1, x2, p=2.0, compute_mode=\"use_mm_for_euclid_dist_if_necessary\""},
    {"F.binary_cross_entropy", "input, target, weight=None, reduction=\"mean\""},
    {"F.binary_cross_entropy_with_logits", "input, target, weight=None, pos_weight=None, reduction=\"mean\""},
    {"F.cross_entropy", "input, target, weight=None, reduction=\"mean\", ignore_index=-100, label_smoothing=0.0"},
    {"F.nll_loss", "input, target, weight=None, reduction=\"mean\", ignore_index=-100"},
    {"F.huber_loss", "input, target, reduction=\"mean\", delta=1.0"},
    {"F.l1_loss", "input, target, reduction=\"mean\""},
    {"F.mse_loss", "input, target, reduction=\"mean\""},
    {"F.smooth_l1_loss", "input, target, reduction=\"mean\", beta=1.0"},
    {"F.soft_margin_loss", "input, target, reduction=\"mean\""},
    {"F.multi_margin_loss", "input, target, p=1, margin=1.0, weight=None, reduction=\"mean\""},
    {"F.multilabel_margin_loss", "input, target, reduction=\"mean\""},
    {"F.kl_div", "input, target, reduction=\"mean\", log_target=False"},
    {"F.poisson_nll_loss", "input, target, log_input=True, full=False, eps=1e-08, reduction=\"mean\""},
    {"F.hinge_embedding_loss", "input, target, margin=1.0, reduction=\"mean\""},
    {"F.margin_ranking_loss", "input1, input2, target, margin=0.0, reduction=\"mean\""},
    {"F.cosine_embedding_loss", "input1, input2, target, margin=0.0, reduction=\"mean\""},
    {"F.triplet_margin_loss", "anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=\"mean\""},
    {"F.ctc_loss", "log_probs, targets, input_lengths, target_lengths, blank=0, reduction=\"mean\", zero_infinity=False"},
};
// clang-format on

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// "a, b=1, c=\"x\"" -> {a}, {b, 1}, {c, "x"}. Defaults hold no comma.
std::vector<PyParam> parse_signature(const char* op, const std::string& sig) {
  std::vector<PyParam> params;
  size_t start = 0;
  while (!sig.empty() && start <= sig.size()) {
    size_t comma = sig.find(',', start);
    std::string item =
        sig.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      params.push_back({item, std::nullopt});
    else
      params.push_back({item.substr(0, eq), item.substr(eq + 1)});
    if (!is_identifier(params.back().name) ||
        (!params.back().def && params.size() > 1 && params[params.size() - 2].def))
      throw std::logic_error(std::string("op table: bad Python signature of ") + op + ": " + sig);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return params;
}

}  // namespace

const std::map<std::string, std::vector<PyParam>, std::less<>>& python_signatures() {
  static const std::map<std::string, std::vector<PyParam>, std::less<>> table = [] {
    std::map<std::string, std::vector<PyParam>, std::less<>> t;
    for (const auto& [op, sig] : kSignatures) t[op] = parse_signature(op, sig);
    return t;
  }();
  return table;
}

const std::vector<PyParam>* python_signature(std::string_view op) {
  const auto& t = python_signatures();
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

const std::vector<std::string>* python_enum(std::string_view op, std::string_view param) {
  // Note [Python enums] (op_table.h). torch/nn/_reduction.py: none 0, mean 1, sum 2.
  static const std::vector<std::string> reduction = {"none", "mean", "sum"};
  static const std::vector<std::string> grid_mode = {"bilinear", "nearest", "bicubic"};
  static const std::vector<std::string> grid_padding = {"zeros", "border", "reflection"};
  static const std::vector<std::string> cdist_mode = {"use_mm_for_euclid_dist_if_necessary",
                                                      "use_mm_for_euclid_dist",
                                                      "donot_use_mm_for_euclid_dist"};
  if (param == "reduction" && op.substr(0, 2) == "F." && op.size() > 5 &&
      (op.substr(op.size() - 5) == "_loss" || op == "F.cross_entropy" ||
       op == "F.binary_cross_entropy" || op == "F.binary_cross_entropy_with_logits" ||
       op == "F.kl_div"))
    return &reduction;
  if (op == "F.grid_sample") {
    if (param == "mode") return &grid_mode;
    if (param == "padding_mode") return &grid_padding;
  }
  if (op == "torch.cdist" && param == "compute_mode") return &cdist_mode;
  return nullptr;
}

std::string spelled_aten_base(std::string_view op) {
  for (std::string_view prefix : {"Tensor.", "torch.", "F."})
    if (op.substr(0, prefix.size()) == prefix && op.size() > prefix.size())
      return "aten::" + std::string(op.substr(prefix.size()));
  return "";
}

const PyCallForm* python_call_form(std::string_view op) {
  // torchvision's Python functions over its op library (torchvision/ops/*.py): the ops take the
  // output size as two ints and return extra results the functions drop.
  static const std::unordered_map<std::string_view, PyCallForm> forms = {
      // aten::_unique2(self, sorted, return_inverse, return_counts), flags True or results unused.
      {"torch.unique.flat",
       {"torch.unique",
        {{"", "{0}", ""},
         {"sorted", "{1}", "True"},
         {"return_inverse", "True", ""},
         {"return_counts", "True", ""}},
        false,
        {{1, 2}, {2, 3}}}},
      // aten::unique_dim(self, dim, sorted, return_inverse, return_counts) returns all three
      // tensors whatever its flags (torch 2.6); torch.unique returns one to three, so both flags
      // are True here, and the ATen call stays where a False flag's result is read.
      {"torch.unique",
       {"torch.unique",
        {{"", "{0}", ""},
         {"sorted", "{2}", "True"},
         {"return_inverse", "True", ""},
         {"return_counts", "True", ""},
         {"dim", "{1}", ""}},
        false,
        {{1, 3}, {2, 4}}}},
      // TorchScript's signed seeds (op_table.cpp, the Generator rows).
      {"Generator.seed", {"torch.ops.aten.seed", {{"", "{0}", ""}}}},
      {"Generator.initial_seed", {"torch.ops.aten.initial_seed", {{"", "{0}", ""}}}},
      // x.to(device, dtype=...): a callee "Tensor.m" is a method of input 0.
      {"Tensor.to_device",
       {"Tensor.to",
        {{"", "{1}", ""},
         {"dtype", "{2}", "None"},
         {"non_blocking", "{3}", "False"},
         {"copy", "{4}", "False"}}}},
      {"torchvision.ops.roi_align",
       {"torchvision.ops.roi_align",
        {{"", "{0}", ""},
         {"", "{1}", ""},
         {"", "({3}, {4})", ""},
         {"spatial_scale", "{2}", "1.0"},
         {"sampling_ratio", "{5}", "-1"},
         {"aligned", "{6}", "False"}}}},
      {"torchvision.ops.roi_pool",
       {"torchvision.ops.roi_pool",
        {{"", "{0}", ""}, {"", "{1}", ""}, {"", "({3}, {4})", ""}, {"spatial_scale", "{2}", "1.0"}},
        true}},
      {"torchvision.ops.ps_roi_align",
       {"torchvision.ops.ps_roi_align",
        {{"", "{0}", ""},
         {"", "{1}", ""},
         {"", "({3}, {4})", ""},
         {"spatial_scale", "{2}", "1.0"},
         {"sampling_ratio", "{5}", "-1"}},
        true}},
      {"torchvision.ops.ps_roi_pool",
       {"torchvision.ops.ps_roi_pool",
        {{"", "{0}", ""}, {"", "{1}", ""}, {"", "({3}, {4})", ""}, {"spatial_scale", "{2}", "1.0"}},
        true}},
  };
  auto it = forms.find(op);
  return it == forms.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Note [Python helper definitions]

namespace {

// A module op written as a subclass of its class whose state_dict hooks keep its state as
// tensors: `save` turns the eager state_dict's entries into them, `load` back (the helpers below).
struct HookedClass {
  const char* op;     // "nnqd.LSTM", also the base class
  const char* name;   // "DynamicQuantizedLSTM"
  const char* holds;  // what its state_dict holds, for the docstring
  const char* save;
  const char* load;
};
const HookedClass kHookedClasses[] = {
    {"nnqd.LSTM", "DynamicQuantizedLSTM", "tensors under nn.LSTM's names, not packed cells",
     "save_rnn_cells", "load_rnn_cells"},
    {"nnqd.GRU", "DynamicQuantizedGRU", "tensors under nn.GRU's names, not packed cells",
     "save_rnn_cells", "load_rnn_cells"},
    {"nnq.Embedding", "QuantizedEmbedding", "its weight as nn.Embedding's `weight`",
     "save_embedding_weight", "load_embedding_weight"},
    {"nnq.EmbeddingBag", "QuantizedEmbeddingBag", "its weight as nn.EmbeddingBag's `weight`",
     "save_embedding_weight", "load_embedding_weight"},
};

PyHelper hooked_class(const HookedClass& c) {
  std::string src = R"PY(class {name}({op}):
    """{op} whose state_dict holds {holds}."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_state_dict_post_hook({save})
        self.register_load_state_dict_pre_hook({load}))PY";
  const std::pair<std::string, std::string> fields[] = {{"{name}", c.name},
                                                        {"{op}", c.op},
                                                        {"{holds}", c.holds},
                                                        {"{save}", c.save},
                                                        {"{load}", c.load}};
  for (const auto& [key, value] : fields)
    for (size_t at = src.find(key); at != std::string::npos; at = src.find(key, at + value.size()))
      src.replace(at, key.size(), value);
  return {c.name, {c.save, c.load}, src};
}

const std::vector<PyHelper>& python_helpers() {
  static const std::vector<PyHelper> t = [] {
    std::vector<PyHelper> v = {
        {"rnn_cell_names", {}, R"PY(def rnn_cell_names(module):
    """nn.LSTM's names of the weights in each packed cell of an nnqd.LSTM / nnqd.GRU."""
    for layer in range(module.num_layers):
        for suffix in ["", "_reverse"] if module.bidirectional else [""]:
            yield [f"{name}_l{layer}{suffix}" for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")])PY"},
        {"save_rnn_cells",
         {"rnn_cell_names"},
         R"PY(def save_rnn_cells(module, state_dict, prefix, local_metadata):
    """state_dict hook: the packed cells as the tensors they pack (qint8 weights, float biases)."""
    weights, biases = module.get_weight(), module.get_bias()
    for i, names in enumerate(rnn_cell_names(module)):
        del state_dict[f"{prefix}_all_weight_values.{i}.param"]
        for name in names:
            state_dict[prefix + name] = (weights if name.startswith("weight") else biases)[name])PY"},
        {"load_rnn_cells",
         {"rnn_cell_names"},
         R"PY(def load_rnn_cells(module, state_dict, prefix, local_metadata, strict, missing_keys,
                   unexpected_keys, error_msgs):
    """load_state_dict pre-hook: packs the tensors of each cell as quantize_dynamic does (qint8,
    reduce_range=True). A state_dict of the eager module itself (packed cells) loads as it is."""
    for i, names in enumerate(rnn_cell_names(module)):
        cell = f"{prefix}_all_weight_values.{i}.param"
        if cell in state_dict:
            continue
        keys = [prefix + name for name in names]
        if not all(key in state_dict for key in keys):
            missing_keys.extend(key for key in keys if key not in state_dict)
            state_dict[cell] = module._all_weight_values[i].param
            continue
        w_ih, w_hh, b_ih, b_hh = (state_dict.pop(key) for key in keys)
        state_dict[cell] = torch.ops.quantized.make_quantized_cell_params_dynamic(
            torch.ops.quantized.linear_prepack(w_ih, b_ih),
            torch.ops.quantized.linear_prepack(w_hh, b_hh), b_ih, b_hh, True))PY"},
        {"save_embedding_weight",
         {},
         R"PY(def save_embedding_weight(module, state_dict, prefix, local_metadata):
    """state_dict hook: the packed weight as nn.Embedding's `weight` (a quantized tensor)."""
    del state_dict[prefix + "_packed_params.dtype"]
    state_dict[prefix + "weight"] = state_dict.pop(prefix + "_packed_params._packed_weight"))PY"},
        {"load_embedding_weight",
         {},
         R"PY(def load_embedding_weight(module, state_dict, prefix, local_metadata, strict, missing_keys,
                          unexpected_keys, error_msgs):
    """load_state_dict pre-hook: `weight` in the eager module's layout (its dtype, then the
    weight its _packed_params packs). A state_dict of the eager module itself loads as it is."""
    packed = prefix + "_packed_params."
    if packed + "_packed_weight" in state_dict:
        return
    weight = state_dict.pop(prefix + "weight", None)
    if weight is None:
        missing_keys.append(prefix + "weight")
        weight = module.weight()
    state_dict[packed + "dtype"] = weight.dtype
    state_dict[packed + "_packed_weight"] = weight)PY"},
    };
    for (const HookedClass& c : kHookedClasses) v.push_back(hooked_class(c));
    return v;
  }();
  return t;
}

}  // namespace

const PyHelper* python_helper(std::string_view name) {
  for (const PyHelper& h : python_helpers())
    if (h.name == name) return &h;
  return nullptr;
}

const PyHelper* python_helper_for(std::string_view op) {
  for (const HookedClass& c : kHookedClasses)
    if (op == c.op) return python_helper(c.name);
  return nullptr;
}

const char* python_binary_operator(std::string_view op) {
  static const std::unordered_map<std::string_view, const char*> ops = {
      {"operator.add", "+"},     {"operator.sub", "-"},         {"operator.mul", "*"},
      {"operator.truediv", "/"}, {"operator.floordiv", "//"},   {"operator.mod", "%"},
      {"operator.lt", "<"},      {"operator.le", "<="},         {"operator.gt", ">"},
      {"operator.ge", ">="},     {"operator.eq", "=="},         {"operator.ne", "!="},
      {"operator.is_", "is"},    {"operator.is_not", "is not"}, {"operator.pow", "**"}};
  auto it = ops.find(op);
  return it == ops.end() ? nullptr : it->second;
}

const char* python_unary_operator(std::string_view op) {
  if (op == "operator.neg") return "-";
  if (op == "operator.not_") return "not";
  return nullptr;
}

bool is_attribute_op(std::string_view op) {
  static const std::set<std::string_view> attrs = {
      "Tensor.dtype", "Tensor.device", "Tensor.is_nested", "Tensor.is_cuda", "Tensor.requires_grad",
      "Device.type",  "Tensor.T",      "Tensor.mT",        "Tensor.H",       "Tensor.mH",
      "Enum.name",    "Enum.value"};
  return attrs.count(op) != 0;
}

std::string python_slice(const std::string& start, const std::string& end,
                         const std::string& step) {
  std::string s = start + ":" + end;
  if (!step.empty() && step != "1") s += ":" + step;
  return s;
}

const char* python_tensor_comparison(std::string_view op) {
  static const std::unordered_map<std::string_view, const char*> ops = {
      {"torch.gt", ">"},  {"torch.lt", "<"},  {"torch.ge", ">="},
      {"torch.le", "<="}, {"torch.eq", "=="}, {"torch.ne", "!="}};
  auto it = ops.find(op);
  return it == ops.end() ? nullptr : it->second;
}

const char* python_tensor_arithmetic(std::string_view op) {
  static const std::unordered_map<std::string_view, const char*> ops = {
      {"torch.add", "+"}, {"torch.sub", "-"}, {"torch.mul", "*"}, {"torch.div", "/"}};
  auto it = ops.find(op);
  return it == ops.end() ? nullptr : it->second;
}

}  // namespace tt
