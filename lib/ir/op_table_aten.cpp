// The op table's rows for ATen ops the public PyTorch API records in a trace, beside the core
// rows of op_table.cpp (Note [Op table rows] holds for both): what `torch.jit.trace` records for
// torch.*, torch.nn.functional.*, Tensor methods, torch.fft.*, torch.linalg.* and
// torch.special.*, each written as the call a person writes.
//
// Note [Spelled ATen ops]
// - A torch.* / Tensor.* / torch.fft.* / torch.linalg.* / torch.special.* spelling is the Python
//   binding generated from the ATen schema itself: same parameter names, order, defaults and
//   keyword-only parameters, and its argument parser resolves the overload the trace recorded
//   (Scalar or Tensor arguments compute the same). So the row lists the overloads of one
//   positional layout and writes every input in schema order; nothing is reordered.
// - An F.* spelling is a Python wrapper (torch/nn/functional.py); a row names one only where the
//   wrapper calls exactly that ATen op with its arguments unchanged in every case (F.celu ->
//   aten::celu, F.unfold -> aten::im2col, F.dropout2d -> aten::feature_dropout for any rank; the
//   wrapper's own defaults are its Python signature in op_python.cpp).
// - Where the ATen overloads of one Python call have other layouts, the lifter rewrites them to
//   one (Note [ATen normalisations] in lib/loaders/torchscript/lifter_ops.cpp): the windows'
//   default overloads to the ones with every parameter, aten::stft to stft.center with
//   center=False (what torch.stft calls after its own padding), std/var(_mean) to .correction.
//   Overloads that differ in their number or kind of inputs share a row (torch.eye(n[, m])): the
//   interpreter and both emitters pick the one whose schema fits the inputs.
// - Python calls that take their arguments in another shape than ATen: ints for strings (Note
//   [Python enums]: reductions, grid_sample's modes), a list as separate arguments (kVarargs:
//   torch.broadcast_tensors(*tensors)), two lists as one tuple (torch.tensordot's dims, in
//   lib/emitters/python/calls.cpp).
// - A private ATen op keeps its row only where PyTorch's own Python code calls it by that name
//   (torch._weight_norm is what nn.utils.weight_norm computes) or a public method stands for it
//   exactly (aten::_conj is what x.conj() records for a complex x).
// - Ops that stay torch.ops.aten calls, and why, are listed in README.md ("What NAME.py spells
//   plainly").
#include "ir/op_table.h"

namespace tt::detail {

void add_aten_rows(std::vector<OpInfo>& t) {
  using K = OpKind;
  using Q = QuantClass;
  const std::vector<std::string> pos = {};  // every input positional
  // clang-format off
  // (One row per line, as in op_table.cpp.)
  const std::vector<OpInfo> rows = {
      // ---------------------------------------------------------------------------------------
      // activations: the F.* wrappers of one ATen op each
      {"F.celu", K::Function, {"aten::celu"}, pos, Q::Float, "celu(input, alpha)", kKeepsInputShape},
      {"F.hardshrink", K::Function, {"aten::hardshrink"}, pos, Q::Float, "hardshrink(input, lambd)", kKeepsInputShape},
      {"F.softshrink", K::Function, {"aten::softshrink"}, pos, Q::Float, "softshrink(input, lambd)", kKeepsInputShape},
      {"F.threshold", K::Function, {"aten::threshold"}, pos, Q::Float, "threshold(input, threshold, value)", kKeepsInputShape},
      {"F.logsigmoid", K::Function, {"aten::log_sigmoid"}, pos, Q::Float, "log(sigmoid(input))", kKeepsInputShape},
      {"F.rrelu", K::Function, {"aten::rrelu"}, {"", "", "", "", "="}, Q::Float, "rrelu(input, lower, upper, training)", kKeepsInputShape},
      // F.dropout2d calls aten::feature_dropout on its input whatever its rank (other ranks
      // than 4 only warn); F.dropout1d/3d add an unsqueeze for unbatched inputs, which the
      // trace shows as its own op.
      {"F.dropout2d", K::Function, {"aten::feature_dropout"}, pos, Q::Native, "channel dropout(input, p, training)", kKeepsInputShape | kMayAliasInput},
      {"F.alpha_dropout", K::Function, {"aten::alpha_dropout"}, pos, Q::Native, "alpha dropout(input, p, training)", kKeepsInputShape | kMayAliasInput},
      {"F.feature_alpha_dropout", K::Function, {"aten::feature_alpha_dropout"}, pos, Q::Native, "feature alpha dropout(input, p, training)", kKeepsInputShape | kMayAliasInput},

      // ---------------------------------------------------------------------------------------
      // windows (the default overloads are normalised to these: Note [ATen normalisations])
      {"torch.hann_window", K::Function, {"aten::hann_window.periodic"}, {"", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "hann_window(window_length, periodic)"},
      {"torch.hamming_window", K::Function, {"aten::hamming_window.periodic_alpha_beta"}, {"", "", "", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "hamming_window(window_length, periodic, alpha, beta)"},
      {"torch.blackman_window", K::Function, {"aten::blackman_window.periodic"}, {"", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "blackman_window(window_length, periodic)"},
      {"torch.bartlett_window", K::Function, {"aten::bartlett_window.periodic"}, {"", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "bartlett_window(window_length, periodic)"},
      {"torch.kaiser_window", K::Function, {"aten::kaiser_window.beta"}, {"", "", "", "dtype", "layout", "device", "pin_memory"}, Q::Shape, "kaiser_window(window_length, periodic, beta)"},

      // ---------------------------------------------------------------------------------------
      // spectral: stft/istft (aten::stft is normalised to stft.center with center=False), fft
      {"torch.stft", K::Function, {"aten::stft.center"}, {"", "", "hop_length", "win_length", "window", "center", "pad_mode", "normalized", "onesided", "return_complex"}, Q::Float, "short-time Fourier transform"},
      {"torch.istft", K::Function, {"aten::istft"}, {"", "", "hop_length", "win_length", "window", "center", "normalized", "onesided", "length", "return_complex"}, Q::Float, "inverse short-time Fourier transform"},
      {"torch.fft.fft", K::Function, {"aten::fft_fft"}, pos, Q::Float, "fft(input, n, dim, norm)"},
      {"torch.fft.ifft", K::Function, {"aten::fft_ifft"}, pos, Q::Float, "ifft(input, n, dim, norm)"},
      {"torch.fft.rfft", K::Function, {"aten::fft_rfft"}, pos, Q::Float, "rfft(input, n, dim, norm)"},
      {"torch.fft.irfft", K::Function, {"aten::fft_irfft"}, pos, Q::Float, "irfft(input, n, dim, norm)"},
      {"torch.fft.hfft", K::Function, {"aten::fft_hfft"}, pos, Q::Float, "hfft(input, n, dim, norm)"},
      {"torch.fft.ihfft", K::Function, {"aten::fft_ihfft"}, pos, Q::Float, "ihfft(input, n, dim, norm)"},
      {"torch.fft.fft2", K::Function, {"aten::fft_fft2"}, pos, Q::Float, "fft2(input, s, dim, norm)"},
      {"torch.fft.ifft2", K::Function, {"aten::fft_ifft2"}, pos, Q::Float, "ifft2(input, s, dim, norm)"},
      {"torch.fft.rfft2", K::Function, {"aten::fft_rfft2"}, pos, Q::Float, "rfft2(input, s, dim, norm)"},
      {"torch.fft.irfft2", K::Function, {"aten::fft_irfft2"}, pos, Q::Float, "irfft2(input, s, dim, norm)"},
      {"torch.fft.hfft2", K::Function, {"aten::fft_hfft2"}, pos, Q::Float, "hfft2(input, s, dim, norm)"},
      {"torch.fft.ihfft2", K::Function, {"aten::fft_ihfft2"}, pos, Q::Float, "ihfft2(input, s, dim, norm)"},
      {"torch.fft.fftn", K::Function, {"aten::fft_fftn"}, pos, Q::Float, "fftn(input, s, dim, norm)"},
      {"torch.fft.ifftn", K::Function, {"aten::fft_ifftn"}, pos, Q::Float, "ifftn(input, s, dim, norm)"},
      {"torch.fft.rfftn", K::Function, {"aten::fft_rfftn"}, pos, Q::Float, "rfftn(input, s, dim, norm)"},
      {"torch.fft.irfftn", K::Function, {"aten::fft_irfftn"}, pos, Q::Float, "irfftn(input, s, dim, norm)"},
      {"torch.fft.hfftn", K::Function, {"aten::fft_hfftn"}, pos, Q::Float, "hfftn(input, s, dim, norm)"},
      {"torch.fft.ihfftn", K::Function, {"aten::fft_ihfftn"}, pos, Q::Float, "ihfftn(input, s, dim, norm)"},
      {"torch.fft.fftshift", K::Function, {"aten::fft_fftshift"}, pos, Q::Float, "fftshift(input, dim)"},
      {"torch.fft.ifftshift", K::Function, {"aten::fft_ifftshift"}, pos, Q::Float, "ifftshift(input, dim)"},
      {"torch.fft.fftfreq", K::Function, {"aten::fft_fftfreq"}, pos, Q::Shape, "fftfreq(n, d)"},
      {"torch.fft.rfftfreq", K::Function, {"aten::fft_rfftfreq"}, pos, Q::Shape, "rfftfreq(n, d)"},

      // ---------------------------------------------------------------------------------------
      // complex numbers
      {"torch.complex", K::Function, {"aten::complex"}, pos, Q::Float, "complex(real, imag)"},
      {"torch.polar", K::Function, {"aten::polar"}, pos, Q::Float, "polar(abs, angle)"},
      {"torch.real", K::Function, {"aten::real"}, pos, Q::Float, "real part (a view)", kMayAliasInput},
      {"torch.imag", K::Function, {"aten::imag"}, pos, Q::Float, "imaginary part (a view)", kMayAliasInput},
      {"torch.view_as_real", K::Function, {"aten::view_as_real"}, pos, Q::Float, "complex as (..., 2) real view", kMayAliasInput},
      {"torch.view_as_complex", K::Function, {"aten::view_as_complex"}, pos, Q::Float, "(..., 2) real as complex view", kMayAliasInput},
      {"torch.angle", K::Function, {"aten::angle"}, pos, Q::Float, "angle (argument) of complex numbers"},
      {"torch.sgn", K::Function, {"aten::sgn"}, pos, Q::Float, "x / |x| (sign of real numbers)"},
      {"torch.conj_physical", K::Function, {"aten::conj_physical"}, pos, Q::Float, "complex conjugate (materialised)"},
      // x.conj() records aten::_conj for a complex x (and nothing for a real one).
      {"Tensor.conj", K::Method, {"aten::_conj", "aten::conj"}, pos, Q::Float, "x.conj(): conjugate view", kMayAliasInput},
      {"Tensor.resolve_conj", K::Method, {"aten::resolve_conj"}, pos, Q::Float, "x.resolve_conj()", kMayAliasInput},
      {"Tensor.resolve_neg", K::Method, {"aten::resolve_neg"}, pos, Q::Float, "x.resolve_neg()", kMayAliasInput},

      // ---------------------------------------------------------------------------------------
      // resampling: F.unfold / F.fold (the ATen ops are im2col / col2im, same argument order)
      {"F.unfold", K::Function, {"aten::im2col"}, {"", "", "dilation", "padding", "stride"}, Q::Float, "sliding blocks (im2col)"},
      {"F.fold", K::Function, {"aten::col2im"}, {"", "", "", "dilation", "padding", "stride"}, Q::Float, "sum of sliding blocks (col2im)"},

      // ---------------------------------------------------------------------------------------
      // recurrent kernels where the module is not lifted (an unbatched input; nn.LSTM, nn.GRU
      // and nn.RNN are module ops otherwise) and the cells
      {"torch.lstm", K::Function, {"aten::lstm.input"}, pos, Q::Float, "lstm(input, (h, c), params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"},
      {"torch.gru", K::Function, {"aten::gru.input"}, pos, Q::Float, "gru(input, h, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"},
      {"torch.rnn_tanh", K::Function, {"aten::rnn_tanh.input"}, pos, Q::Float, "rnn_tanh(input, h, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"},
      {"torch.rnn_relu", K::Function, {"aten::rnn_relu.input"}, pos, Q::Float, "rnn_relu(input, h, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)"},
      // nn.LSTMCell / nn.GRUCell traced record their kernel's pieces: unsafe_chunk (chunk without
      // view tracking) among them.
      {"torch.unsafe_chunk", K::Function, {"aten::unsafe_chunk"}, pos, Q::Float, "unsafe_chunk(input, chunks, dim)"},
      {"torch.unsafe_split", K::Function, {"aten::unsafe_split.Tensor"}, pos, Q::Float, "unsafe_split(input, split_size, dim)"},
      {"torch.unsafe_split_with_sizes", K::Function, {"aten::unsafe_split_with_sizes"}, pos, Q::Float, "unsafe_split_with_sizes(input, split_sizes, dim)"},
      {"torch.lstm_cell", K::Function, {"aten::lstm_cell"}, pos, Q::Float, "lstm_cell(input, (h, c), w_ih, w_hh, b_ih, b_hh)"},
      {"torch.gru_cell", K::Function, {"aten::gru_cell"}, pos, Q::Float, "gru_cell(input, h, w_ih, w_hh, b_ih, b_hh)"},
      {"torch.rnn_tanh_cell", K::Function, {"aten::rnn_tanh_cell"}, pos, Q::Float, "rnn_tanh_cell(input, h, w_ih, w_hh, b_ih, b_hh)"},
      {"torch.rnn_relu_cell", K::Function, {"aten::rnn_relu_cell"}, pos, Q::Float, "rnn_relu_cell(input, h, w_ih, w_hh, b_ih, b_hh)"},

      // ---------------------------------------------------------------------------------------
      // nn.utils.weight_norm computes torch._weight_norm(v, g, dim) (torch/nn/utils/weight_norm.py).
      {"torch._weight_norm", K::Function, {"aten::_weight_norm"}, pos, Q::Float, "v * (g / norm_except_dim(v, 2, dim))"},
      // ---------------------------------------------------------------------------------------
      // x[idx] with tensor indices (written as a subscript, like Tensor.slice), the transposes
      // written as attributes (x.T, x.mT, x.H, x.mH), torch.fill (the out-of-place twin of
      // x.fill_(v) on a tensor nothing else sees)
      {"Tensor.index", K::Method, {"aten::index.Tensor", "aten::index.Tensor_hacked_twin"}, pos, Q::Float, "x[i, :, j] with tensor indices (None: the whole dim)"},
      {"Tensor.T", K::Method, {"aten::numpy_T", "aten::numpy_T.a"}, pos, Q::Float, "x.T: dims reversed", kMayAliasInput},
      {"Tensor.mT", K::Method, {"aten::mT", "aten::mT.a"}, pos, Q::Float, "x.mT: last two dims swapped", kMayAliasInput},
      {"Tensor.H", K::Method, {"aten::matrix_H", "aten::matrix_H.a"}, pos, Q::Float, "x.H: conjugate transpose of a matrix", kMayAliasInput},
      {"Tensor.mH", K::Method, {"aten::mH", "aten::mH.a"}, pos, Q::Float, "x.mH: conjugate transpose of the last two dims", kMayAliasInput},
      {"Tensor.adjoint", K::Method, {"aten::adjoint"}, pos, Q::Float, "x.adjoint()", kMayAliasInput},
      {"Tensor.item", K::Method, {"aten::item"}, pos, Q::Shape, "x.item(): the number of a one-element tensor"},
      {"torch.is_floating_point", K::Function, {"aten::is_floating_point"}, pos, Q::Shape, "is_floating_point(input)"},
      {"torch.is_complex", K::Function, {"aten::is_complex"}, pos, Q::Shape, "is_complex(input)"},
      {"torch.is_nonzero", K::Function, {"aten::is_nonzero"}, pos, Q::Shape, "is_nonzero(input)"},
      {"torch.is_same_size", K::Function, {"aten::is_same_size"}, pos, Q::Shape, "is_same_size(input, other)"},
      {"Tensor.is_contiguous", K::Method, {"aten::is_contiguous", "aten::is_contiguous.memory_format"}, pos, Q::Shape, "x.is_contiguous()"},

      // ---------------------------------------------------------------------------------------
      // std/var (and _mean): aten::std(x, unbiased) and std.dim(x, dim, unbiased, keepdim) are
      // normalised to std.correction (correction None for unbiased, 0 for biased)
      {"torch.std", K::Function, {"aten::std.correction"}, pos, Q::Float, "std(input, dim, correction=, keepdim=)"},
      {"torch.var", K::Function, {"aten::var.correction"}, pos, Q::Float, "var(input, dim, correction=, keepdim=)"},
      {"torch.std_mean", K::Function, {"aten::std_mean.correction"}, pos, Q::Float, "(std, mean) over dim"},
      {"torch.var_mean", K::Function, {"aten::var_mean.correction"}, pos, Q::Float, "(var, mean) over dim"},

      // ---------------------------------------------------------------------------------------
      // more factories and the overloads that differ in their number of inputs (the
      // interpreter and the emitters tell them apart by it)
      {"torch.eye", K::Function, {"aten::eye", "aten::eye.m"}, pos, Q::Shape, "eye(n[, m])"},
      {"torch.range", K::Function, {"aten::range.step", "aten::range"}, pos, Q::Shape, "range(start, end, step) (end included)"},
      {"torch.scalar_tensor", K::Function, {"aten::scalar_tensor"}, pos, Q::Shape, "scalar_tensor(s): a 0-dim tensor"},
      {"torch.empty", K::Function, {"aten::empty.memory_format"}, pos, Q::Shape, "empty(size): uninitialised"},
      {"torch.empty_like", K::Function, {"aten::empty_like"}, pos, Q::Float, "empty_like(input): uninitialised"},
      {"Tensor.new_empty", K::Method, {"aten::new_empty"}, pos, Q::Float, "x.new_empty(size): uninitialised"},
      {"torch.nuclear_norm", K::Function, {"aten::nuclear_norm", "aten::nuclear_norm.dim"}, pos, Q::Float, "nuclear_norm(input[, dim], keepdim)"},
      {"torch.randint_like", K::Function, {"aten::randint_like", "aten::randint_like.low_dtype"}, pos, Q::Float, "randint_like(input[, low], high)"},
      {"torch.linalg.matrix_rank", K::Function, {"aten::linalg_matrix_rank.atol_rtol_float", "aten::linalg_matrix_rank.atol_rtol_tensor"}, pos, Q::Float, "matrix_rank(A, atol=, rtol=, hermitian=)"},
      {"torch.linalg.pinv", K::Function, {"aten::linalg_pinv.atol_rtol_float", "aten::linalg_pinv.atol_rtol_tensor"}, pos, Q::Float, "pinv(A, atol=, rtol=, hermitian=)"},
      // torch.embedding_bag returns all four results (F.embedding_bag only the first).
      {"torch.embedding_bag", K::Function, {"aten::embedding_bag", "aten::embedding_bag.padding_idx"}, pos, Q::Float, "embedding_bag(weight, input, offsets, ...) -> 4 results"},

      // ---------------------------------------------------------------------------------------
      // torch.nn.functional spellings of torch.* bindings (F.cosine_similarity is
      // torch.cosine_similarity) and of wrappers that pass their arguments through
      {"F.cosine_similarity", K::Function, {"aten::cosine_similarity"}, pos, Q::Float, "cosine_similarity(x1, x2, dim, eps)"},
      {"F.pairwise_distance", K::Function, {"aten::pairwise_distance"}, pos, Q::Float, "pairwise_distance(x1, x2, p, eps, keepdim)"},
      {"F.pdist", K::Function, {"aten::pdist"}, pos, Q::Float, "pdist(input, p)"},
      {"F.bilinear", K::Function, {"aten::bilinear"}, pos, Q::Float, "bilinear(input1, input2, weight, bias)"},
      {"F.channel_shuffle", K::Function, {"aten::channel_shuffle"}, pos, Q::Float, "channel_shuffle(input, groups)"},
      {"F.one_hot", K::Function, {"aten::one_hot"}, pos, Q::Float, "one_hot(tensor, num_classes)"},
      {"F.conv_tbc", K::Function, {"aten::conv_tbc"}, pos, Q::Float, "conv_tbc(input, weight, bias, pad)"},
      // F.affine_grid checks the size and calls affine_grid_generator(theta, size, align_corners).
      {"F.affine_grid", K::Function, {"aten::affine_grid_generator"}, pos, Q::Float, "affine_grid(theta, size, align_corners)"},

      // F.grid_sample and the losses take strings where ATen takes int codes (Note [Python
      // enums]); each wrapper checks its arguments and calls the op with them unchanged (the
      // losses that broadcast their inputs first show that as torch.broadcast_tensors).
      {"F.grid_sample", K::Function, {"aten::grid_sampler"}, {"", "", "mode", "padding_mode", "align_corners"}, Q::Float, "grid_sample(input, grid, mode, padding_mode, align_corners)"},
      {"torch.cdist", K::Function, {"aten::cdist"}, {"", "", "p", "compute_mode"}, Q::Float, "cdist(x1, x2, p, compute_mode)"},
      {"F.binary_cross_entropy", K::Function, {"aten::binary_cross_entropy"}, {"", "", "weight", "reduction"}, Q::Float, "binary_cross_entropy(input, target, weight, reduction)"},
      {"F.binary_cross_entropy_with_logits", K::Function, {"aten::binary_cross_entropy_with_logits"}, {"", "", "weight", "pos_weight", "reduction"}, Q::Float, "binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)"},
      {"F.cross_entropy", K::Function, {"aten::cross_entropy_loss"}, {"", "", "weight", "reduction", "ignore_index", "label_smoothing"}, Q::Float, "cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)"},
      {"F.nll_loss", K::Function, {"aten::nll_loss_nd"}, {"", "", "weight", "reduction", "ignore_index"}, Q::Float, "nll_loss(input, target, weight, reduction, ignore_index)"},
      {"F.huber_loss", K::Function, {"aten::huber_loss"}, {"", "", "reduction", "delta"}, Q::Float, "huber_loss(input, target, reduction, delta)"},
      {"F.l1_loss", K::Function, {"aten::l1_loss"}, {"", "", "reduction"}, Q::Float, "l1_loss(input, target, reduction)"},
      {"F.mse_loss", K::Function, {"aten::mse_loss"}, {"", "", "reduction"}, Q::Float, "mse_loss(input, target, reduction)"},
      {"F.smooth_l1_loss", K::Function, {"aten::smooth_l1_loss"}, {"", "", "reduction", "beta"}, Q::Float, "smooth_l1_loss(input, target, reduction, beta)"},
      {"F.soft_margin_loss", K::Function, {"aten::soft_margin_loss"}, {"", "", "reduction"}, Q::Float, "soft_margin_loss(input, target, reduction)"},
      {"F.multi_margin_loss", K::Function, {"aten::multi_margin_loss"}, {"", "", "p", "margin", "weight", "reduction"}, Q::Float, "multi_margin_loss(input, target, p, margin, weight, reduction)"},
      {"F.multilabel_margin_loss", K::Function, {"aten::multilabel_margin_loss"}, {"", "", "reduction"}, Q::Float, "multilabel_margin_loss(input, target, reduction)"},
      // F.kl_div(reduction="batchmean") is kl_div(reduction="sum") and a division, as traced.
      {"F.kl_div", K::Function, {"aten::kl_div"}, {"", "", "reduction", "log_target"}, Q::Float, "kl_div(input, target, reduction, log_target)"},
      {"F.poisson_nll_loss", K::Function, {"aten::poisson_nll_loss"}, {"", "", "log_input", "full", "eps", "reduction"}, Q::Float, "poisson_nll_loss(input, target, log_input, full, eps, reduction)"},
      {"F.hinge_embedding_loss", K::Function, {"aten::hinge_embedding_loss"}, {"", "", "margin", "reduction"}, Q::Float, "hinge_embedding_loss(input, target, margin, reduction)"},
      {"F.margin_ranking_loss", K::Function, {"aten::margin_ranking_loss"}, {"", "", "", "margin", "reduction"}, Q::Float, "margin_ranking_loss(input1, input2, target, margin, reduction)"},
      {"F.cosine_embedding_loss", K::Function, {"aten::cosine_embedding_loss"}, {"", "", "", "margin", "reduction"}, Q::Float, "cosine_embedding_loss(input1, input2, target, margin, reduction)"},
      {"F.triplet_margin_loss", K::Function, {"aten::triplet_margin_loss"}, {"", "", "", "margin", "p", "eps", "swap", "reduction"}, Q::Float, "triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)"},
      {"F.ctc_loss", K::Function, {"aten::ctc_loss.IntList", "aten::ctc_loss.Tensor"}, {"", "", "", "", "blank", "reduction", "zero_infinity"}, Q::Float, "ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)"},

      // ---------------------------------------------------------------------------------------
      // Python functions taking their tensors as separate arguments (kVarargs), and
      // torch.atleast_Nd, which takes one tensor or a list
      {"torch.broadcast_tensors", K::Function, {"aten::broadcast_tensors"}, pos, Q::Float, "broadcast_tensors(*tensors)", kVarargs | kMayAliasInput},
      {"torch.block_diag", K::Function, {"aten::block_diag"}, pos, Q::Float, "block_diag(*tensors)", kVarargs},
      {"torch.cartesian_prod", K::Function, {"aten::cartesian_prod"}, pos, Q::Float, "cartesian_prod(*tensors)", kVarargs},
      {"torch.meshgrid", K::Function, {"aten::meshgrid", "aten::meshgrid.indexing"}, {"", "indexing"}, Q::Float, "meshgrid(*tensors, indexing=)", kVarargs | kMayAliasInput},
      // torch.tensordot(a, b, dims=(dims_a, dims_b)) passes the two lists on: the Python emitter
      // groups them (calls.cpp).
      {"torch.tensordot", K::Function, {"aten::tensordot"}, pos, Q::Float, "tensordot(a, b, dims=(dims_a, dims_b))"},
      {"torch.atleast_1d", K::Function, {"aten::atleast_1d", "aten::atleast_1d.Sequence"}, pos, Q::Float, "atleast_1d(tensor or list)", kMayAliasInput},
      {"torch.atleast_2d", K::Function, {"aten::atleast_2d", "aten::atleast_2d.Sequence"}, pos, Q::Float, "atleast_2d(tensor or list)", kMayAliasInput},
      {"torch.atleast_3d", K::Function, {"aten::atleast_3d", "aten::atleast_3d.Sequence"}, pos, Q::Float, "atleast_3d(tensor or list)", kMayAliasInput},

      // ---------------------------------------------------------------------------------------
      // torch.* functions bound from their schema (Note [Spelled ATen ops]): math, comparisons,
      // reductions, shapes and views, indexing, linear algebra, factories, random sampling
      {"torch.absolute", K::Function, {"aten::absolute"}, pos, Q::Float, "torch.absolute"},
      {"torch.acos", K::Function, {"aten::acos"}, pos, Q::Float, "torch.acos"},
      {"torch.acosh", K::Function, {"aten::acosh"}, pos, Q::Float, "torch.acosh"},
      {"torch.addbmm", K::Function, {"aten::addbmm"}, pos, Q::Float, "torch.addbmm"},
      {"torch.addcdiv", K::Function, {"aten::addcdiv"}, pos, Q::Float, "torch.addcdiv"},
      {"torch.addcmul", K::Function, {"aten::addcmul"}, pos, Q::Float, "torch.addcmul"},
      {"torch.addmv", K::Function, {"aten::addmv"}, pos, Q::Float, "torch.addmv"},
      {"torch.addr", K::Function, {"aten::addr"}, pos, Q::Float, "torch.addr"},
      {"torch.all", K::Function, {"aten::all", "aten::all.dim", "aten::all.dims"}, pos, Q::Float, "torch.all"},
      {"torch.allclose", K::Function, {"aten::allclose"}, pos, Q::Float, "torch.allclose"},
      {"torch.aminmax", K::Function, {"aten::aminmax"}, pos, Q::Float, "torch.aminmax"},
      {"torch.any", K::Function, {"aten::any", "aten::any.dim", "aten::any.dims"}, pos, Q::Float, "torch.any"},
      {"torch.arccos", K::Function, {"aten::arccos"}, pos, Q::Float, "torch.arccos"},
      {"torch.arccosh", K::Function, {"aten::arccosh"}, pos, Q::Float, "torch.arccosh"},
      {"torch.arcsin", K::Function, {"aten::arcsin"}, pos, Q::Float, "torch.arcsin"},
      {"torch.arcsinh", K::Function, {"aten::arcsinh"}, pos, Q::Float, "torch.arcsinh"},
      {"torch.arctan", K::Function, {"aten::arctan"}, pos, Q::Float, "torch.arctan"},
      {"torch.arctan2", K::Function, {"aten::arctan2"}, pos, Q::Float, "torch.arctan2"},
      {"torch.arctanh", K::Function, {"aten::arctanh"}, pos, Q::Float, "torch.arctanh"},
      {"torch.argsort", K::Function, {"aten::argsort"}, pos, Q::Float, "torch.argsort"},
      {"torch.argwhere", K::Function, {"aten::argwhere"}, pos, Q::Float, "torch.argwhere"},
      {"torch.as_strided", K::Function, {"aten::as_strided"}, pos, Q::Float, "torch.as_strided", kMayAliasInput},
      {"torch.as_strided_scatter", K::Function, {"aten::as_strided_scatter"}, pos, Q::Float, "torch.as_strided_scatter"},
      {"torch.asin", K::Function, {"aten::asin"}, pos, Q::Float, "torch.asin"},
      {"torch.asinh", K::Function, {"aten::asinh"}, pos, Q::Float, "torch.asinh"},
      {"torch.atan", K::Function, {"aten::atan"}, pos, Q::Float, "torch.atan"},
      {"torch.atan2", K::Function, {"aten::atan2"}, pos, Q::Float, "torch.atan2"},
      {"torch.atanh", K::Function, {"aten::atanh"}, pos, Q::Float, "torch.atanh"},
      {"torch.bernoulli", K::Function, {"aten::bernoulli"}, pos, Q::Float, "torch.bernoulli"},
      {"torch.bincount", K::Function, {"aten::bincount"}, pos, Q::Float, "torch.bincount"},
      {"torch.binomial", K::Function, {"aten::binomial"}, pos, Q::Float, "torch.binomial"},
      {"torch.bitwise_and", K::Function, {"aten::bitwise_and.Tensor", "aten::bitwise_and.Scalar", "aten::bitwise_and.Scalar_Tensor"}, pos, Q::Float, "torch.bitwise_and"},
      {"torch.bitwise_left_shift", K::Function, {"aten::bitwise_left_shift.Tensor", "aten::bitwise_left_shift.Tensor_Scalar", "aten::bitwise_left_shift.Scalar_Tensor"}, pos, Q::Float, "torch.bitwise_left_shift"},
      {"torch.bitwise_not", K::Function, {"aten::bitwise_not"}, pos, Q::Float, "torch.bitwise_not"},
      {"torch.bitwise_or", K::Function, {"aten::bitwise_or.Tensor", "aten::bitwise_or.Scalar", "aten::bitwise_or.Scalar_Tensor"}, pos, Q::Float, "torch.bitwise_or"},
      {"torch.bitwise_right_shift", K::Function, {"aten::bitwise_right_shift.Tensor", "aten::bitwise_right_shift.Tensor_Scalar", "aten::bitwise_right_shift.Scalar_Tensor"}, pos, Q::Float, "torch.bitwise_right_shift"},
      {"torch.bitwise_xor", K::Function, {"aten::bitwise_xor.Tensor", "aten::bitwise_xor.Scalar", "aten::bitwise_xor.Scalar_Tensor"}, pos, Q::Float, "torch.bitwise_xor"},
      {"torch.broadcast_to", K::Function, {"aten::broadcast_to"}, pos, Q::Float, "torch.broadcast_to", kMayAliasInput},
      {"torch.bucketize", K::Function, {"aten::bucketize.Tensor", "aten::bucketize.Scalar"}, pos, Q::Float, "torch.bucketize"},
      {"torch.cholesky", K::Function, {"aten::cholesky"}, pos, Q::Float, "torch.cholesky"},
      {"torch.cholesky_inverse", K::Function, {"aten::cholesky_inverse"}, pos, Q::Float, "torch.cholesky_inverse"},
      {"torch.cholesky_solve", K::Function, {"aten::cholesky_solve"}, pos, Q::Float, "torch.cholesky_solve"},
      {"torch.clip", K::Function, {"aten::clip", "aten::clip.Tensor"}, pos, Q::Float, "torch.clip"},
      {"torch.column_stack", K::Function, {"aten::column_stack"}, pos, Q::Float, "torch.column_stack"},
      {"torch.combinations", K::Function, {"aten::combinations"}, pos, Q::Float, "torch.combinations"},
      {"torch.concat", K::Function, {"aten::concat"}, pos, Q::Float, "torch.concat"},
      {"torch.concatenate", K::Function, {"aten::concatenate"}, pos, Q::Float, "torch.concatenate"},
      {"torch.convolution", K::Function, {"aten::convolution"}, pos, Q::Float, "torch.convolution"},
      {"torch.copysign", K::Function, {"aten::copysign.Tensor", "aten::copysign.Scalar"}, pos, Q::Float, "torch.copysign"},
      {"torch.corrcoef", K::Function, {"aten::corrcoef"}, pos, Q::Float, "torch.corrcoef"},
      {"torch.cosh", K::Function, {"aten::cosh"}, pos, Q::Float, "torch.cosh"},
      {"torch.count_nonzero", K::Function, {"aten::count_nonzero.dim_IntList", "aten::count_nonzero"}, pos, Q::Float, "torch.count_nonzero"},
      {"torch.cov", K::Function, {"aten::cov"}, pos, Q::Float, "torch.cov"},
      {"torch.cross", K::Function, {"aten::cross"}, pos, Q::Float, "torch.cross"},
      {"torch.cummax", K::Function, {"aten::cummax"}, pos, Q::Float, "torch.cummax"},
      {"torch.cummin", K::Function, {"aten::cummin"}, pos, Q::Float, "torch.cummin"},
      {"torch.cumprod", K::Function, {"aten::cumprod"}, pos, Q::Float, "torch.cumprod"},
      {"torch.deg2rad", K::Function, {"aten::deg2rad"}, pos, Q::Float, "torch.deg2rad"},
      {"torch.det", K::Function, {"aten::det"}, pos, Q::Float, "torch.det"},
      {"torch.diag", K::Function, {"aten::diag"}, pos, Q::Float, "torch.diag"},
      {"torch.diag_embed", K::Function, {"aten::diag_embed"}, pos, Q::Float, "torch.diag_embed"},
      {"torch.diagflat", K::Function, {"aten::diagflat"}, pos, Q::Float, "torch.diagflat"},
      {"torch.diagonal", K::Function, {"aten::diagonal"}, pos, Q::Float, "torch.diagonal", kMayAliasInput},
      {"torch.diagonal_scatter", K::Function, {"aten::diagonal_scatter"}, pos, Q::Float, "torch.diagonal_scatter"},
      {"torch.diff", K::Function, {"aten::diff"}, pos, Q::Float, "torch.diff"},
      {"torch.digamma", K::Function, {"aten::digamma"}, pos, Q::Float, "torch.digamma"},
      {"torch.dist", K::Function, {"aten::dist"}, pos, Q::Float, "torch.dist"},
      {"torch.divide", K::Function, {"aten::divide.Tensor", "aten::divide.Scalar", "aten::divide.Tensor_mode", "aten::divide.Scalar_mode"}, pos, Q::Float, "torch.divide"},
      {"torch.dot", K::Function, {"aten::dot"}, pos, Q::Float, "torch.dot"},
      {"torch.dsplit", K::Function, {"aten::dsplit.int"}, pos, Q::Float, "torch.dsplit", kMayAliasInput},
      {"torch.dstack", K::Function, {"aten::dstack"}, pos, Q::Float, "torch.dstack"},
      {"torch.equal", K::Function, {"aten::equal"}, pos, Q::Float, "torch.equal"},
      {"torch.erfc", K::Function, {"aten::erfc"}, pos, Q::Float, "torch.erfc"},
      {"torch.erfinv", K::Function, {"aten::erfinv"}, pos, Q::Float, "torch.erfinv"},
      {"torch.exp2", K::Function, {"aten::exp2"}, pos, Q::Float, "torch.exp2"},
      {"torch.expm1", K::Function, {"aten::expm1"}, pos, Q::Float, "torch.expm1"},
      {"torch.fill", K::Function, {"aten::fill.Scalar", "aten::fill.Tensor"}, pos, Q::Float, "torch.fill"},
      {"torch.fix", K::Function, {"aten::fix"}, pos, Q::Float, "torch.fix"},
      {"torch.fliplr", K::Function, {"aten::fliplr"}, pos, Q::Float, "torch.fliplr"},
      {"torch.flipud", K::Function, {"aten::flipud"}, pos, Q::Float, "torch.flipud"},
      {"torch.float_power", K::Function, {"aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar", "aten::float_power.Scalar"}, pos, Q::Float, "torch.float_power"},
      {"torch.fmax", K::Function, {"aten::fmax"}, pos, Q::Float, "torch.fmax"},
      {"torch.fmin", K::Function, {"aten::fmin"}, pos, Q::Float, "torch.fmin"},
      {"torch.frac", K::Function, {"aten::frac"}, pos, Q::Float, "torch.frac"},
      {"torch.frexp", K::Function, {"aten::frexp.Tensor"}, pos, Q::Float, "torch.frexp"},
      {"torch.frobenius_norm", K::Function, {"aten::frobenius_norm.dim"}, pos, Q::Float, "torch.frobenius_norm"},
      {"torch.gcd", K::Function, {"aten::gcd"}, pos, Q::Float, "torch.gcd"},
      {"torch.geqrf", K::Function, {"aten::geqrf"}, pos, Q::Float, "torch.geqrf"},
      {"torch.ger", K::Function, {"aten::ger"}, pos, Q::Float, "torch.ger"},
      {"torch.greater", K::Function, {"aten::greater.Tensor", "aten::greater.Scalar"}, pos, Q::Float, "torch.greater"},
      {"torch.greater_equal", K::Function, {"aten::greater_equal.Tensor", "aten::greater_equal.Scalar"}, pos, Q::Float, "torch.greater_equal"},
      {"torch.grid_sampler_2d", K::Function, {"aten::grid_sampler_2d"}, pos, Q::Float, "torch.grid_sampler_2d"},
      {"torch.grid_sampler_3d", K::Function, {"aten::grid_sampler_3d"}, pos, Q::Float, "torch.grid_sampler_3d"},
      {"torch.heaviside", K::Function, {"aten::heaviside"}, pos, Q::Float, "torch.heaviside"},
      {"torch.histc", K::Function, {"aten::histc"}, pos, Q::Float, "torch.histc"},
      {"torch.histogram", K::Function, {"aten::histogram.bins_tensor"}, pos, Q::Float, "torch.histogram"},
      {"torch.hsplit", K::Function, {"aten::hsplit.int"}, pos, Q::Float, "torch.hsplit", kMayAliasInput},
      {"torch.hstack", K::Function, {"aten::hstack"}, pos, Q::Float, "torch.hstack"},
      {"torch.hypot", K::Function, {"aten::hypot"}, pos, Q::Float, "torch.hypot"},
      {"torch.i0", K::Function, {"aten::i0"}, pos, Q::Float, "torch.i0"},
      {"torch.igamma", K::Function, {"aten::igamma"}, pos, Q::Float, "torch.igamma"},
      {"torch.igammac", K::Function, {"aten::igammac"}, pos, Q::Float, "torch.igammac"},
      {"torch.index_add", K::Function, {"aten::index_add"}, pos, Q::Float, "torch.index_add"},
      {"torch.index_fill", K::Function, {"aten::index_fill.int_Tensor", "aten::index_fill.int_Scalar"}, pos, Q::Float, "torch.index_fill"},
      {"torch.index_put", K::Function, {"aten::index_put", "aten::index_put.hacked_twin"}, pos, Q::Float, "torch.index_put"},
      {"torch.index_reduce", K::Function, {"aten::index_reduce"}, pos, Q::Float, "torch.index_reduce"},
      {"torch.inner", K::Function, {"aten::inner"}, pos, Q::Float, "torch.inner"},
      {"torch.inverse", K::Function, {"aten::inverse"}, pos, Q::Float, "torch.inverse"},
      {"torch.isclose", K::Function, {"aten::isclose"}, pos, Q::Float, "torch.isclose"},
      {"torch.isfinite", K::Function, {"aten::isfinite"}, pos, Q::Float, "torch.isfinite"},
      {"torch.isin", K::Function, {"aten::isin.Tensor_Tensor"}, pos, Q::Float, "torch.isin"},
      {"torch.isinf", K::Function, {"aten::isinf"}, pos, Q::Float, "torch.isinf"},
      {"torch.isnan", K::Function, {"aten::isnan"}, pos, Q::Float, "torch.isnan"},
      {"torch.isneginf", K::Function, {"aten::isneginf"}, pos, Q::Float, "torch.isneginf"},
      {"torch.isposinf", K::Function, {"aten::isposinf"}, pos, Q::Float, "torch.isposinf"},
      {"torch.isreal", K::Function, {"aten::isreal"}, pos, Q::Float, "torch.isreal"},
      {"torch.kron", K::Function, {"aten::kron"}, pos, Q::Float, "torch.kron"},
      {"torch.kthvalue", K::Function, {"aten::kthvalue"}, pos, Q::Float, "torch.kthvalue"},
      {"torch.lcm", K::Function, {"aten::lcm"}, pos, Q::Float, "torch.lcm"},
      {"torch.ldexp", K::Function, {"aten::ldexp.Tensor"}, pos, Q::Float, "torch.ldexp"},
      {"torch.lerp", K::Function, {"aten::lerp.Scalar", "aten::lerp.Tensor"}, pos, Q::Float, "torch.lerp"},
      {"torch.less", K::Function, {"aten::less.Tensor", "aten::less.Scalar"}, pos, Q::Float, "torch.less"},
      {"torch.less_equal", K::Function, {"aten::less_equal.Tensor", "aten::less_equal.Scalar"}, pos, Q::Float, "torch.less_equal"},
      {"torch.lgamma", K::Function, {"aten::lgamma"}, pos, Q::Float, "torch.lgamma"},
      {"torch.linspace", K::Function, {"aten::linspace.Tensor_Tensor", "aten::linspace.Tensor_Scalar", "aten::linspace.Scalar_Tensor", "aten::linspace"}, pos, Q::Shape, "torch.linspace"},
      {"torch.log10", K::Function, {"aten::log10"}, pos, Q::Float, "torch.log10"},
      {"torch.log1p", K::Function, {"aten::log1p"}, pos, Q::Float, "torch.log1p"},
      {"torch.log2", K::Function, {"aten::log2"}, pos, Q::Float, "torch.log2"},
      {"torch.logaddexp", K::Function, {"aten::logaddexp"}, pos, Q::Float, "torch.logaddexp"},
      {"torch.logaddexp2", K::Function, {"aten::logaddexp2"}, pos, Q::Float, "torch.logaddexp2"},
      {"torch.logcumsumexp", K::Function, {"aten::logcumsumexp"}, pos, Q::Float, "torch.logcumsumexp"},
      {"torch.logdet", K::Function, {"aten::logdet"}, pos, Q::Float, "torch.logdet"},
      {"torch.logical_and", K::Function, {"aten::logical_and"}, pos, Q::Float, "torch.logical_and"},
      {"torch.logical_or", K::Function, {"aten::logical_or"}, pos, Q::Float, "torch.logical_or"},
      {"torch.logical_xor", K::Function, {"aten::logical_xor"}, pos, Q::Float, "torch.logical_xor"},
      {"torch.logit", K::Function, {"aten::logit"}, pos, Q::Float, "torch.logit"},
      {"torch.logspace", K::Function, {"aten::logspace.Tensor_Tensor", "aten::logspace.Tensor_Scalar", "aten::logspace.Scalar_Tensor", "aten::logspace"}, pos, Q::Shape, "torch.logspace"},
      {"torch.logsumexp", K::Function, {"aten::logsumexp"}, pos, Q::Float, "torch.logsumexp"},
      {"torch.lu_solve", K::Function, {"aten::lu_solve"}, pos, Q::Float, "torch.lu_solve"},
      {"torch.lu_unpack", K::Function, {"aten::lu_unpack"}, pos, Q::Float, "torch.lu_unpack"},
      {"torch.masked_scatter", K::Function, {"aten::masked_scatter"}, pos, Q::Float, "torch.masked_scatter"},
      {"torch.masked_select", K::Function, {"aten::masked_select"}, pos, Q::Float, "torch.masked_select"},
      {"torch.matrix_exp", K::Function, {"aten::matrix_exp"}, pos, Q::Float, "torch.matrix_exp"},
      {"torch.matrix_power", K::Function, {"aten::matrix_power"}, pos, Q::Float, "torch.matrix_power"},
      {"torch.median", K::Function, {"aten::median", "aten::median.dim"}, pos, Q::Float, "torch.median"},
      {"torch.mode", K::Function, {"aten::mode"}, pos, Q::Float, "torch.mode"},
      {"torch.moveaxis", K::Function, {"aten::moveaxis.intlist", "aten::moveaxis.int"}, pos, Q::Float, "torch.moveaxis", kMayAliasInput},
      {"torch.movedim", K::Function, {"aten::movedim.int", "aten::movedim.intlist"}, pos, Q::Float, "torch.movedim", kMayAliasInput},
      {"torch.msort", K::Function, {"aten::msort"}, pos, Q::Float, "torch.msort"},
      {"torch.multinomial", K::Function, {"aten::multinomial"}, pos, Q::Float, "torch.multinomial"},
      {"torch.multiply", K::Function, {"aten::multiply.Tensor", "aten::multiply.Scalar"}, pos, Q::Float, "torch.multiply"},
      {"torch.mv", K::Function, {"aten::mv"}, pos, Q::Float, "torch.mv"},
      {"torch.mvlgamma", K::Function, {"aten::mvlgamma"}, pos, Q::Float, "torch.mvlgamma"},
      {"torch.nan_to_num", K::Function, {"aten::nan_to_num"}, pos, Q::Float, "torch.nan_to_num"},
      {"torch.nanmean", K::Function, {"aten::nanmean"}, pos, Q::Float, "torch.nanmean"},
      {"torch.nanmedian", K::Function, {"aten::nanmedian", "aten::nanmedian.dim"}, pos, Q::Float, "torch.nanmedian"},
      {"torch.nanquantile", K::Function, {"aten::nanquantile", "aten::nanquantile.scalar"}, pos, Q::Float, "torch.nanquantile"},
      {"torch.nansum", K::Function, {"aten::nansum"}, pos, Q::Float, "torch.nansum"},
      {"torch.narrow", K::Function, {"aten::narrow", "aten::narrow.Tensor"}, pos, Q::Float, "torch.narrow", kMayAliasInput},
      {"torch.negative", K::Function, {"aten::negative"}, pos, Q::Float, "torch.negative"},
      {"torch.nextafter", K::Function, {"aten::nextafter"}, pos, Q::Float, "torch.nextafter"},
      {"torch.nonzero", K::Function, {"aten::nonzero"}, pos, Q::Float, "torch.nonzero"},
      {"torch.norm_except_dim", K::Function, {"aten::norm_except_dim"}, pos, Q::Float, "torch.norm_except_dim"},
      {"torch.normal", K::Function, {"aten::normal.Tensor_float", "aten::normal.float_Tensor", "aten::normal.Tensor_Tensor"}, pos, Q::Float, "torch.normal"},
      {"torch.not_equal", K::Function, {"aten::not_equal.Tensor", "aten::not_equal.Scalar"}, pos, Q::Float, "torch.not_equal"},
      {"torch.orgqr", K::Function, {"aten::orgqr"}, pos, Q::Float, "torch.orgqr"},
      {"torch.ormqr", K::Function, {"aten::ormqr"}, pos, Q::Float, "torch.ormqr"},
      {"torch.outer", K::Function, {"aten::outer"}, pos, Q::Float, "torch.outer"},
      {"torch.pinverse", K::Function, {"aten::pinverse"}, pos, Q::Float, "torch.pinverse"},
      {"torch.poisson", K::Function, {"aten::poisson"}, pos, Q::Float, "torch.poisson"},
      {"torch.polygamma", K::Function, {"aten::polygamma"}, pos, Q::Float, "torch.polygamma"},
      {"torch.positive", K::Function, {"aten::positive"}, pos, Q::Float, "torch.positive", kMayAliasInput},
      {"torch.put", K::Function, {"aten::put"}, pos, Q::Float, "torch.put"},
      {"torch.qr", K::Function, {"aten::qr"}, pos, Q::Float, "torch.qr"},
      {"torch.quantile", K::Function, {"aten::quantile", "aten::quantile.scalar"}, pos, Q::Float, "torch.quantile"},
      {"torch.rad2deg", K::Function, {"aten::rad2deg"}, pos, Q::Float, "torch.rad2deg"},
      {"torch.rand_like", K::Function, {"aten::rand_like"}, pos, Q::Float, "torch.rand_like"},
      {"torch.randn_like", K::Function, {"aten::randn_like"}, pos, Q::Float, "torch.randn_like"},
      {"torch.ravel", K::Function, {"aten::ravel"}, pos, Q::Float, "torch.ravel", kMayAliasInput},
      {"torch.renorm", K::Function, {"aten::renorm"}, pos, Q::Float, "torch.renorm"},
      {"torch.rot90", K::Function, {"aten::rot90"}, pos, Q::Float, "torch.rot90"},
      {"torch.scatter", K::Function, {"aten::scatter.src", "aten::scatter.value", "aten::scatter.value_reduce"}, pos, Q::Float, "torch.scatter"},
      {"torch.scatter_add", K::Function, {"aten::scatter_add"}, pos, Q::Float, "torch.scatter_add"},
      {"torch.scatter_reduce", K::Function, {"aten::scatter_reduce.two"}, {"", "", "", "", "", "include_self"}, Q::Float, "torch.scatter_reduce"},
      {"torch.searchsorted", K::Function, {"aten::searchsorted.Tensor", "aten::searchsorted.Scalar"}, pos, Q::Float, "torch.searchsorted"},
      {"torch.select_scatter", K::Function, {"aten::select_scatter"}, pos, Q::Float, "torch.select_scatter"},
      {"torch.signbit", K::Function, {"aten::signbit"}, pos, Q::Float, "torch.signbit"},
      {"torch.sinc", K::Function, {"aten::sinc"}, pos, Q::Float, "torch.sinc"},
      {"torch.sinh", K::Function, {"aten::sinh"}, pos, Q::Float, "torch.sinh"},
      {"torch.slice_scatter", K::Function, {"aten::slice_scatter"}, pos, Q::Float, "torch.slice_scatter"},
      {"torch.slogdet", K::Function, {"aten::slogdet"}, pos, Q::Float, "torch.slogdet"},
      {"torch.squeeze", K::Function, {"aten::squeeze.dims"}, pos, Q::Float, "torch.squeeze", kMayAliasInput},
      {"torch.subtract", K::Function, {"aten::subtract.Tensor", "aten::subtract.Scalar"}, pos, Q::Float, "torch.subtract"},
      {"torch.svd", K::Function, {"aten::svd"}, pos, Q::Float, "torch.svd"},
      {"torch.swapaxes", K::Function, {"aten::swapaxes"}, pos, Q::Float, "torch.swapaxes", kMayAliasInput},
      {"torch.swapdims", K::Function, {"aten::swapdims"}, pos, Q::Float, "torch.swapdims", kMayAliasInput},
      {"torch.take", K::Function, {"aten::take"}, pos, Q::Float, "torch.take"},
      {"torch.take_along_dim", K::Function, {"aten::take_along_dim"}, pos, Q::Float, "torch.take_along_dim"},
      {"torch.tan", K::Function, {"aten::tan"}, pos, Q::Float, "torch.tan"},
      {"torch.tensor_split", K::Function, {"aten::tensor_split.sections"}, pos, Q::Float, "torch.tensor_split", kMayAliasInput},
      {"torch.tile", K::Function, {"aten::tile"}, pos, Q::Float, "torch.tile"},
      {"torch.trace", K::Function, {"aten::trace"}, pos, Q::Float, "torch.trace"},
      {"torch.triangular_solve", K::Function, {"aten::triangular_solve"}, pos, Q::Float, "torch.triangular_solve"},
      {"torch.tril_indices", K::Function, {"aten::tril_indices"}, pos, Q::Shape, "torch.tril_indices"},
      {"torch.triu_indices", K::Function, {"aten::triu_indices"}, pos, Q::Shape, "torch.triu_indices"},
      {"torch.true_divide", K::Function, {"aten::true_divide.Tensor", "aten::true_divide.Scalar"}, pos, Q::Float, "torch.true_divide"},
      {"torch.trunc", K::Function, {"aten::trunc"}, pos, Q::Float, "torch.trunc"},
      {"torch.vander", K::Function, {"aten::vander"}, pos, Q::Float, "torch.vander"},
      {"torch.vdot", K::Function, {"aten::vdot"}, pos, Q::Float, "torch.vdot"},
      {"torch.vsplit", K::Function, {"aten::vsplit.int"}, pos, Q::Float, "torch.vsplit", kMayAliasInput},
      {"torch.vstack", K::Function, {"aten::vstack"}, pos, Q::Float, "torch.vstack"},
      {"torch.xlogy", K::Function, {"aten::xlogy.Tensor", "aten::xlogy.Scalar_Other", "aten::xlogy.Scalar_Self"}, pos, Q::Float, "torch.xlogy"},
      // ---------------------------------------------------------------------------------------
      // Tensor methods without a torch.* function (or for an overload with another layout)
      {"Tensor.argsort", K::Method, {"aten::argsort.stable"}, pos, Q::Float, "Tensor.argsort"},
      {"Tensor.bernoulli", K::Method, {"aten::bernoulli.p"}, pos, Q::Float, "Tensor.bernoulli"},
      {"Tensor.chalf", K::Method, {"aten::chalf"}, pos, Q::Float, "Tensor.chalf"},
      {"Tensor.dsplit", K::Method, {"aten::dsplit.array"}, pos, Q::Float, "Tensor.dsplit", kMayAliasInput},
      {"Tensor.histogram", K::Method, {"aten::histogram.bin_ct"}, pos, Q::Float, "Tensor.histogram"},
      {"Tensor.hsplit", K::Method, {"aten::hsplit.array"}, pos, Q::Float, "Tensor.hsplit", kMayAliasInput},
      {"Tensor.pin_memory", K::Method, {"aten::pin_memory"}, pos, Q::Float, "Tensor.pin_memory", kMayAliasInput},
      {"Tensor.prod", K::Method, {"aten::prod"}, pos, Q::Float, "Tensor.prod"},
      {"Tensor.reshape_as", K::Method, {"aten::reshape_as"}, pos, Q::Float, "Tensor.reshape_as", kMayAliasInput},
      {"Tensor.round", K::Method, {"aten::round.decimals"}, pos, Q::Float, "Tensor.round"},
      {"Tensor.scatter", K::Method, {"aten::scatter.src", "aten::scatter.reduce"}, pos, Q::Float, "Tensor.scatter"},
      {"Tensor.sort", K::Method, {"aten::sort.stable"}, pos, Q::Float, "Tensor.sort"},
      {"Tensor.sum_to_size", K::Method, {"aten::sum_to_size"}, pos, Q::Float, "Tensor.sum_to_size"},
      {"Tensor.tensor_split", K::Method, {"aten::tensor_split.indices", "aten::tensor_split.tensor_indices_or_sections"}, pos, Q::Float, "Tensor.tensor_split", kMayAliasInput},
      {"Tensor.unfold", K::Method, {"aten::unfold"}, pos, Q::Float, "Tensor.unfold", kMayAliasInput},
      {"Tensor.vsplit", K::Method, {"aten::vsplit.array"}, pos, Q::Float, "Tensor.vsplit", kMayAliasInput},
      // ---------------------------------------------------------------------------------------
      // torch.linalg
      {"torch.linalg.cholesky", K::Function, {"aten::linalg_cholesky"}, pos, Q::Float, "torch.linalg.cholesky"},
      {"torch.linalg.cholesky_ex", K::Function, {"aten::linalg_cholesky_ex"}, pos, Q::Float, "torch.linalg.cholesky_ex"},
      {"torch.linalg.cond", K::Function, {"aten::linalg_cond", "aten::linalg_cond.p_str"}, pos, Q::Float, "torch.linalg.cond"},
      {"torch.linalg.cross", K::Function, {"aten::linalg_cross"}, pos, Q::Float, "torch.linalg.cross"},
      {"torch.linalg.det", K::Function, {"aten::linalg_det"}, pos, Q::Float, "torch.linalg.det"},
      {"torch.linalg.diagonal", K::Function, {"aten::linalg_diagonal"}, pos, Q::Float, "torch.linalg.diagonal", kMayAliasInput},
      {"torch.linalg.eig", K::Function, {"aten::linalg_eig"}, pos, Q::Float, "torch.linalg.eig"},
      {"torch.linalg.eigh", K::Function, {"aten::linalg_eigh"}, pos, Q::Float, "torch.linalg.eigh"},
      {"torch.linalg.eigvals", K::Function, {"aten::linalg_eigvals"}, pos, Q::Float, "torch.linalg.eigvals"},
      {"torch.linalg.eigvalsh", K::Function, {"aten::linalg_eigvalsh"}, pos, Q::Float, "torch.linalg.eigvalsh"},
      {"torch.linalg.householder_product", K::Function, {"aten::linalg_householder_product"}, pos, Q::Float, "torch.linalg.householder_product"},
      {"torch.linalg.inv", K::Function, {"aten::linalg_inv"}, pos, Q::Float, "torch.linalg.inv"},
      {"torch.linalg.inv_ex", K::Function, {"aten::linalg_inv_ex"}, pos, Q::Float, "torch.linalg.inv_ex"},
      {"torch.linalg.ldl_factor", K::Function, {"aten::linalg_ldl_factor"}, pos, Q::Float, "torch.linalg.ldl_factor"},
      {"torch.linalg.ldl_factor_ex", K::Function, {"aten::linalg_ldl_factor_ex"}, pos, Q::Float, "torch.linalg.ldl_factor_ex"},
      {"torch.linalg.ldl_solve", K::Function, {"aten::linalg_ldl_solve"}, pos, Q::Float, "torch.linalg.ldl_solve"},
      {"torch.linalg.lstsq", K::Function, {"aten::linalg_lstsq"}, pos, Q::Float, "torch.linalg.lstsq"},
      {"torch.linalg.lu", K::Function, {"aten::linalg_lu"}, pos, Q::Float, "torch.linalg.lu"},
      {"torch.linalg.lu_factor", K::Function, {"aten::linalg_lu_factor"}, pos, Q::Float, "torch.linalg.lu_factor"},
      {"torch.linalg.lu_factor_ex", K::Function, {"aten::linalg_lu_factor_ex"}, pos, Q::Float, "torch.linalg.lu_factor_ex"},
      {"torch.linalg.lu_solve", K::Function, {"aten::linalg_lu_solve"}, pos, Q::Float, "torch.linalg.lu_solve"},
      {"torch.linalg.matmul", K::Function, {"aten::linalg_matmul"}, pos, Q::Float, "torch.linalg.matmul"},
      {"torch.linalg.matrix_exp", K::Function, {"aten::linalg_matrix_exp"}, pos, Q::Float, "torch.linalg.matrix_exp"},
      {"torch.linalg.matrix_norm", K::Function, {"aten::linalg_matrix_norm", "aten::linalg_matrix_norm.str_ord"}, pos, Q::Float, "torch.linalg.matrix_norm"},
      {"torch.linalg.matrix_power", K::Function, {"aten::linalg_matrix_power"}, pos, Q::Float, "torch.linalg.matrix_power"},
      {"torch.linalg.multi_dot", K::Function, {"aten::linalg_multi_dot"}, pos, Q::Float, "torch.linalg.multi_dot"},
      {"torch.linalg.norm", K::Function, {"aten::linalg_norm", "aten::linalg_norm.ord_str"}, pos, Q::Float, "torch.linalg.norm"},
      {"torch.linalg.qr", K::Function, {"aten::linalg_qr"}, pos, Q::Float, "torch.linalg.qr"},
      {"torch.linalg.slogdet", K::Function, {"aten::linalg_slogdet"}, pos, Q::Float, "torch.linalg.slogdet"},
      {"torch.linalg.solve", K::Function, {"aten::linalg_solve"}, pos, Q::Float, "torch.linalg.solve"},
      {"torch.linalg.solve_ex", K::Function, {"aten::linalg_solve_ex"}, pos, Q::Float, "torch.linalg.solve_ex"},
      {"torch.linalg.solve_triangular", K::Function, {"aten::linalg_solve_triangular"}, pos, Q::Float, "torch.linalg.solve_triangular"},
      {"torch.linalg.svd", K::Function, {"aten::linalg_svd"}, pos, Q::Float, "torch.linalg.svd"},
      {"torch.linalg.svdvals", K::Function, {"aten::linalg_svdvals"}, pos, Q::Float, "torch.linalg.svdvals"},
      {"torch.linalg.tensorinv", K::Function, {"aten::linalg_tensorinv"}, pos, Q::Float, "torch.linalg.tensorinv"},
      {"torch.linalg.tensorsolve", K::Function, {"aten::linalg_tensorsolve"}, pos, Q::Float, "torch.linalg.tensorsolve"},
      {"torch.linalg.vander", K::Function, {"aten::linalg_vander"}, pos, Q::Float, "torch.linalg.vander"},
      {"torch.linalg.vecdot", K::Function, {"aten::linalg_vecdot"}, pos, Q::Float, "torch.linalg.vecdot"},
      {"torch.linalg.vector_norm", K::Function, {"aten::linalg_vector_norm"}, pos, Q::Float, "torch.linalg.vector_norm"},
      // ---------------------------------------------------------------------------------------
      // torch.special
      {"torch.special.airy_ai", K::Function, {"aten::special_airy_ai"}, pos, Q::Float, "torch.special.airy_ai"},
      {"torch.special.bessel_j0", K::Function, {"aten::special_bessel_j0"}, pos, Q::Float, "torch.special.bessel_j0"},
      {"torch.special.bessel_j1", K::Function, {"aten::special_bessel_j1"}, pos, Q::Float, "torch.special.bessel_j1"},
      {"torch.special.bessel_y0", K::Function, {"aten::special_bessel_y0"}, pos, Q::Float, "torch.special.bessel_y0"},
      {"torch.special.bessel_y1", K::Function, {"aten::special_bessel_y1"}, pos, Q::Float, "torch.special.bessel_y1"},
      {"torch.special.chebyshev_polynomial_t", K::Function, {"aten::special_chebyshev_polynomial_t", "aten::special_chebyshev_polynomial_t.x_scalar", "aten::special_chebyshev_polynomial_t.n_scalar"}, pos, Q::Float, "torch.special.chebyshev_polynomial_t"},
      {"torch.special.chebyshev_polynomial_u", K::Function, {"aten::special_chebyshev_polynomial_u", "aten::special_chebyshev_polynomial_u.x_scalar", "aten::special_chebyshev_polynomial_u.n_scalar"}, pos, Q::Float, "torch.special.chebyshev_polynomial_u"},
      {"torch.special.chebyshev_polynomial_v", K::Function, {"aten::special_chebyshev_polynomial_v", "aten::special_chebyshev_polynomial_v.x_scalar", "aten::special_chebyshev_polynomial_v.n_scalar"}, pos, Q::Float, "torch.special.chebyshev_polynomial_v"},
      {"torch.special.chebyshev_polynomial_w", K::Function, {"aten::special_chebyshev_polynomial_w", "aten::special_chebyshev_polynomial_w.x_scalar", "aten::special_chebyshev_polynomial_w.n_scalar"}, pos, Q::Float, "torch.special.chebyshev_polynomial_w"},
      {"torch.special.digamma", K::Function, {"aten::special_digamma"}, pos, Q::Float, "torch.special.digamma"},
      {"torch.special.entr", K::Function, {"aten::special_entr"}, pos, Q::Float, "torch.special.entr"},
      {"torch.special.erf", K::Function, {"aten::special_erf"}, pos, Q::Float, "torch.special.erf"},
      {"torch.special.erfc", K::Function, {"aten::special_erfc"}, pos, Q::Float, "torch.special.erfc"},
      {"torch.special.erfcx", K::Function, {"aten::special_erfcx"}, pos, Q::Float, "torch.special.erfcx"},
      {"torch.special.erfinv", K::Function, {"aten::special_erfinv"}, pos, Q::Float, "torch.special.erfinv"},
      {"torch.special.exp2", K::Function, {"aten::special_exp2"}, pos, Q::Float, "torch.special.exp2"},
      {"torch.special.expit", K::Function, {"aten::special_expit"}, pos, Q::Float, "torch.special.expit"},
      {"torch.special.expm1", K::Function, {"aten::special_expm1"}, pos, Q::Float, "torch.special.expm1"},
      {"torch.special.gammainc", K::Function, {"aten::special_gammainc"}, pos, Q::Float, "torch.special.gammainc"},
      {"torch.special.gammaincc", K::Function, {"aten::special_gammaincc"}, pos, Q::Float, "torch.special.gammaincc"},
      {"torch.special.gammaln", K::Function, {"aten::special_gammaln"}, pos, Q::Float, "torch.special.gammaln"},
      {"torch.special.hermite_polynomial_h", K::Function, {"aten::special_hermite_polynomial_h", "aten::special_hermite_polynomial_h.x_scalar", "aten::special_hermite_polynomial_h.n_scalar"}, pos, Q::Float, "torch.special.hermite_polynomial_h"},
      {"torch.special.hermite_polynomial_he", K::Function, {"aten::special_hermite_polynomial_he", "aten::special_hermite_polynomial_he.x_scalar", "aten::special_hermite_polynomial_he.n_scalar"}, pos, Q::Float, "torch.special.hermite_polynomial_he"},
      {"torch.special.i0", K::Function, {"aten::special_i0"}, pos, Q::Float, "torch.special.i0"},
      {"torch.special.i0e", K::Function, {"aten::special_i0e"}, pos, Q::Float, "torch.special.i0e"},
      {"torch.special.i1", K::Function, {"aten::special_i1"}, pos, Q::Float, "torch.special.i1"},
      {"torch.special.i1e", K::Function, {"aten::special_i1e"}, pos, Q::Float, "torch.special.i1e"},
      {"torch.special.laguerre_polynomial_l", K::Function, {"aten::special_laguerre_polynomial_l", "aten::special_laguerre_polynomial_l.x_scalar", "aten::special_laguerre_polynomial_l.n_scalar"}, pos, Q::Float, "torch.special.laguerre_polynomial_l"},
      {"torch.special.legendre_polynomial_p", K::Function, {"aten::special_legendre_polynomial_p", "aten::special_legendre_polynomial_p.x_scalar", "aten::special_legendre_polynomial_p.n_scalar"}, pos, Q::Float, "torch.special.legendre_polynomial_p"},
      {"torch.special.log1p", K::Function, {"aten::special_log1p"}, pos, Q::Float, "torch.special.log1p"},
      {"torch.special.log_ndtr", K::Function, {"aten::special_log_ndtr"}, pos, Q::Float, "torch.special.log_ndtr"},
      {"torch.special.log_softmax", K::Function, {"aten::special_log_softmax"}, pos, Q::Float, "torch.special.log_softmax"},
      {"torch.special.logit", K::Function, {"aten::special_logit"}, pos, Q::Float, "torch.special.logit"},
      {"torch.special.logsumexp", K::Function, {"aten::special_logsumexp"}, pos, Q::Float, "torch.special.logsumexp"},
      {"torch.special.modified_bessel_i0", K::Function, {"aten::special_modified_bessel_i0"}, pos, Q::Float, "torch.special.modified_bessel_i0"},
      {"torch.special.modified_bessel_i1", K::Function, {"aten::special_modified_bessel_i1"}, pos, Q::Float, "torch.special.modified_bessel_i1"},
      {"torch.special.modified_bessel_k0", K::Function, {"aten::special_modified_bessel_k0"}, pos, Q::Float, "torch.special.modified_bessel_k0"},
      {"torch.special.modified_bessel_k1", K::Function, {"aten::special_modified_bessel_k1"}, pos, Q::Float, "torch.special.modified_bessel_k1"},
      {"torch.special.multigammaln", K::Function, {"aten::special_multigammaln"}, pos, Q::Float, "torch.special.multigammaln"},
      {"torch.special.ndtr", K::Function, {"aten::special_ndtr"}, pos, Q::Float, "torch.special.ndtr"},
      {"torch.special.ndtri", K::Function, {"aten::special_ndtri"}, pos, Q::Float, "torch.special.ndtri"},
      {"torch.special.polygamma", K::Function, {"aten::special_polygamma"}, pos, Q::Float, "torch.special.polygamma"},
      {"torch.special.psi", K::Function, {"aten::special_psi"}, pos, Q::Float, "torch.special.psi"},
      {"torch.special.round", K::Function, {"aten::special_round"}, pos, Q::Float, "torch.special.round"},
      {"torch.special.scaled_modified_bessel_k0", K::Function, {"aten::special_scaled_modified_bessel_k0"}, pos, Q::Float, "torch.special.scaled_modified_bessel_k0"},
      {"torch.special.scaled_modified_bessel_k1", K::Function, {"aten::special_scaled_modified_bessel_k1"}, pos, Q::Float, "torch.special.scaled_modified_bessel_k1"},
      {"torch.special.shifted_chebyshev_polynomial_t", K::Function, {"aten::special_shifted_chebyshev_polynomial_t", "aten::special_shifted_chebyshev_polynomial_t.x_scalar", "aten::special_shifted_chebyshev_polynomial_t.n_scalar"}, pos, Q::Float, "torch.special.shifted_chebyshev_polynomial_t"},
      {"torch.special.shifted_chebyshev_polynomial_u", K::Function, {"aten::special_shifted_chebyshev_polynomial_u", "aten::special_shifted_chebyshev_polynomial_u.x_scalar", "aten::special_shifted_chebyshev_polynomial_u.n_scalar"}, pos, Q::Float, "torch.special.shifted_chebyshev_polynomial_u"},
      {"torch.special.shifted_chebyshev_polynomial_v", K::Function, {"aten::special_shifted_chebyshev_polynomial_v", "aten::special_shifted_chebyshev_polynomial_v.x_scalar", "aten::special_shifted_chebyshev_polynomial_v.n_scalar"}, pos, Q::Float, "torch.special.shifted_chebyshev_polynomial_v"},
      {"torch.special.shifted_chebyshev_polynomial_w", K::Function, {"aten::special_shifted_chebyshev_polynomial_w", "aten::special_shifted_chebyshev_polynomial_w.x_scalar", "aten::special_shifted_chebyshev_polynomial_w.n_scalar"}, pos, Q::Float, "torch.special.shifted_chebyshev_polynomial_w"},
      {"torch.special.sinc", K::Function, {"aten::special_sinc"}, pos, Q::Float, "torch.special.sinc"},
      {"torch.special.softmax", K::Function, {"aten::special_softmax"}, pos, Q::Float, "torch.special.softmax"},
      {"torch.special.spherical_bessel_j0", K::Function, {"aten::special_spherical_bessel_j0"}, pos, Q::Float, "torch.special.spherical_bessel_j0"},
      {"torch.special.xlog1py", K::Function, {"aten::special_xlog1py", "aten::special_xlog1py.other_scalar", "aten::special_xlog1py.self_scalar"}, pos, Q::Float, "torch.special.xlog1py"},
      {"torch.special.xlogy", K::Function, {"aten::special_xlogy", "aten::special_xlogy.other_scalar", "aten::special_xlogy.self_scalar"}, pos, Q::Float, "torch.special.xlogy"},
      {"torch.special.zeta", K::Function, {"aten::special_zeta", "aten::special_zeta.other_scalar", "aten::special_zeta.self_scalar"}, pos, Q::Float, "torch.special.zeta"},
  };
  // clang-format on
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace tt::detail
