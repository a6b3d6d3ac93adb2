// Python emitter: writes a Graph as a standalone, readable PyTorch module (DESIGN.md §2).
//
// Note [Shape of the generated module]
// - __init__ rebuilds the module tree so that state_dict keys (and their order) equal the
//   original's: each module op's path gets `nn.X(...)` once, intermediate and custom modules are
//   plain `nn.Module()` containers, and weights not owned by a module op are registered on their
//   container as nn.Parameter / persistent buffer. Attribute names that are not identifiers
//   ("0" of a Sequential) go through getattr/setattr, as torch.fx does.
// - forward has one statement per node. Constants, attribute reads (prim.GetAttr) and small
//   list/tuple constructions are inlined into the call that uses them, so the code reads like
//   hand-written PyTorch rather than like an SSA dump.
// - Values keep their IR names; an all-digit name ("no source name") gets one derived from the
//   module path or the op ("conv1", "relu", "cat"), made unique.
//
// Note [Dropping default arguments]
// Function and method ops carry every ATen argument, constants included. Trailing positional
// arguments and keyword arguments equal to the ATen schema's default are left out, which is exact
// for torch.* and Tensor.* (their Python bindings are generated from those schemas) and for the
// F.* wrappers the op table uses (their Python defaults match the ATen defaults; a unit test
// compares the two). The schema is looked up in the dispatcher (ATen core, not the JIT). When an
// op has several candidate overloads, an argument is dropped only if all of them agree.
#include "emitters/python.h"

#include "ir/op_table.h"
#include "ir/quant.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace tt {
namespace {

// ---------------------------------------------------------------------------------------------
// Python lexical helpers

bool is_py_keyword(const std::string& s) {
  static const std::set<std::string> kw = {
      "False", "None",   "True",    "and",      "as",     "assert", "async",  "await",
      "break", "class",  "continue", "def",     "del",    "elif",   "else",   "except",
      "finally", "for",  "from",    "global",   "if",     "import", "in",     "is",
      "lambda", "nonlocal", "not",  "or",       "pass",   "raise",  "return", "try",
      "while", "with",   "yield"};
  return kw.count(s) != 0;
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return !is_py_keyword(s);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string py_str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Python's repr() of a float: the shortest digits that round-trip, fixed notation for exponents
// in [-4, 16), scientific otherwise ("1e-05", "0.0001", "1.0", "1e+16"). Templated so float32
// values print with float32's shortest digits (0.1f -> "0.1", not "0.10000000149011612").
template <typename T>
std::string py_float(T value) {
  if (std::isnan(value)) return "float(\"nan\")";
  if (std::isinf(value)) return value > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string s(buf, res.ptr);
  std::string sign;
  if (!s.empty() && s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
      while (int_part.size() < static_cast<size_t>(exp + 1)) int_part += '0';
      std::string frac = digits.size() > static_cast<size_t>(exp + 1) ? digits.substr(exp + 1) : "0";
      out = int_part + "." + frac;
    } else {
      out = "0." + std::string(-exp - 1, '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return sign + out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    parts.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// An expression and whether it can be used as a call receiver without parentheses.
struct Expr {
  Expr() = default;
  Expr(std::string t, bool a = true, std::optional<std::vector<std::string>> elems = std::nullopt)
      : text(std::move(t)), atomic(a), list_elems(std::move(elems)) {}
  std::string text;
  bool atomic = true;
  // Set for list literals: the element texts (lets `x.view([a, b])` become `x.view(a, b)`).
  std::optional<std::vector<std::string>> list_elems;
};

std::string receiver(const Expr& e) { return e.atomic ? e.text : "(" + e.text + ")"; }

// ---------------------------------------------------------------------------------------------
// module attribute paths: "layer1.0.conv1" -> getattr(self.layer1, "0").conv1

std::string attr_path(const std::string& base, const std::vector<std::string>& comps) {
  std::string e = base;
  for (const auto& c : comps) e = is_identifier(c) ? e + "." + c : "getattr(" + e + ", " + py_str(c) + ")";
  return e;
}

std::string self_path(const std::string& dotted) {
  if (dotted.empty()) return "self";
  return attr_path("self", split(dotted, '.'));
}

std::string assign_attr(const std::string& owner, const std::string& name, const std::string& rhs) {
  if (is_identifier(name)) return owner + "." + name + " = " + rhs;
  return "setattr(" + owner + ", " + py_str(name) + ", " + rhs + ")";
}

// ---------------------------------------------------------------------------------------------
// torch.nn constructor signatures: which leading arguments are required (written positionally)
// and which defaults can be left out. Generated from inspect.signature of torch 1.13 (loss
// modules and containers left out); defaults in the emitter's own literal syntax.

struct CtorParam {
  std::string name;
  std::optional<std::string> def;  // nullopt: required
};

const std::map<std::string, std::vector<CtorParam>>& ctor_table() {
  static const std::map<std::string, std::vector<CtorParam>> table = [] {
    static const std::pair<const char*, const char*> rows[] = {
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
    };
    std::map<std::string, std::vector<CtorParam>> t;
    for (const auto& [op, sig] : rows) {
      std::vector<CtorParam> params;
      if (*sig) {
        for (std::string item : split(sig, ',')) {
          while (!item.empty() && item.front() == ' ') item.erase(0, 1);
          size_t eq = item.find('=');
          if (eq == std::string::npos)
            params.push_back({item, std::nullopt});
          else
            params.push_back({item.substr(0, eq), item.substr(eq + 1)});
        }
      }
      t[op] = std::move(params);
    }
    return t;
  }();
  return table;
}

// Whether a module's list attribute may be written as one number when all elements are equal
// (the module expands it again with _single/_pair/_triple/_quadruple).
bool collapsible_module_attr(const std::string& name) {
  static const std::set<std::string> names = {"kernel_size", "stride",      "padding",
                                              "dilation",    "output_padding", "output_size",
                                              "size",        "scale_factor"};
  return names.count(name) != 0;
}

bool numeric_equal(const std::string& a, const std::string& b) {
  auto parse = [](const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  };
  double x, y;
  return parse(a, x) && parse(b, y) && x == y;
}

// Import aliases for op-name prefixes of quantization modules.
const std::map<std::string, std::string>& import_aliases() {
  static const std::map<std::string, std::string> m = {
      {"quant", "torch.ao.quantization"},
      {"nni", "torch.ao.nn.intrinsic"},
      {"nniqat", "torch.ao.nn.intrinsic.qat"},
      {"nnq", "torch.ao.nn.quantized"},
      {"nnqat", "torch.ao.nn.qat"},
  };
  return m;
}

// Module classes called through a method ("FloatFunctional.add" -> self.ff.add(a, b)).
const std::map<std::string, std::string>& method_module_classes() {
  static const std::map<std::string, std::string> m = {
      {"FloatFunctional", "nnq.FloatFunctional"},
      {"QFunctional", "nnq.QFunctional"},
  };
  return m;
}

// ---------------------------------------------------------------------------------------------
// ATen schemas (Note [Dropping default arguments])

const c10::FunctionSchema* find_schema(const std::string& qualified) {
  size_t sep = qualified.find("::");
  if (sep == std::string::npos) return nullptr;
  size_t dot = qualified.find('.', sep + 2);
  std::string name = qualified.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
  if (overload == "default") overload.clear();
  auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!handle) return nullptr;
  return &handle->schema();
}

bool matches_default(const AttrValue& v, const c10::IValue& d) {
  if (d.isNone()) return std::holds_alternative<NoneAttr>(v);
  if (d.isBool()) return std::holds_alternative<bool>(v) && std::get<bool>(v) == d.toBool();
  if (d.isInt()) {
    if (auto* i = std::get_if<int64_t>(&v)) return *i == d.toInt();
    if (auto* f = std::get_if<double>(&v)) return *f == static_cast<double>(d.toInt());
    return false;
  }
  if (d.isDouble()) {
    if (auto* f = std::get_if<double>(&v)) return *f == d.toDouble();
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i) == d.toDouble();
    return false;
  }
  if (d.isString()) {
    auto* s = std::get_if<std::string>(&v);
    return s && *s == d.toStringRef();
  }
  if (d.isList()) {
    auto* l = std::get_if<std::vector<int64_t>>(&v);
    if (!l) return false;
    auto items = d.toListRef();
    if (items.size() != l->size()) return false;
    for (size_t i = 0; i < l->size(); ++i)
      if (!items[i].isInt() || items[i].toInt() != (*l)[i]) return false;
    return true;
  }
  return false;
}

// What the candidate schemas say about argument i; fields are set only when all agree.
struct ArgFacts {
  bool known = false;        // at least one candidate schema covers the argument
  bool kwarg_only = false;
  std::string name;
  std::optional<int> fixed_size;  // int[N]
};

// ---------------------------------------------------------------------------------------------
// the emitter

const char* layout_python(int64_t v) {
  switch (v) {
    case 0: return "torch.strided";
    case 1: return "torch.sparse_coo";
    case 2: return "torch.sparse_csr";
    case 3: return "torch._mkldnn";
    case 4: return "torch.sparse_csc";
    case 5: return "torch.sparse_bsr";
    case 6: return "torch.sparse_bsc";
    default: return nullptr;
  }
}

const char* memory_format_python(int64_t v) {
  switch (v) {
    case 0: return "torch.contiguous_format";
    case 1: return "torch.preserve_format";
    case 2: return "torch.channels_last";
    case 3: return "torch.channels_last_3d";
    default: return nullptr;
  }
}

DType tensor_dtype(const at::Tensor& t) {
  return dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
}

bool is_float_dtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16;
}
bool is_complex_dtype(DType d) { return d == DType::C64 || d == DType::C128; }
bool is_quantized_dtype(DType d) { return d == DType::QI8 || d == DType::QU8 || d == DType::QI32; }

std::string describe(const Node& n) {
  std::string s = n.op();
  if (n.num_outputs() > 0) s = "%" + n.output(0)->name() + " (" + n.op() + ")";
  if (!n.scope().empty()) s += " in " + n.scope();
  if (!n.loc().empty()) s += " at " + n.loc();
  return s;
}

[[noreturn]] void unsupported(const Node& n, const std::string& what, const std::string& fix) {
  throw Error(ExitCode::Unsupported, "cannot write node " + describe(n) + " as Python: " + what +
                                         " — " + fix);
}

// The module tree declared in __init__ (Note [Shape of the generated module]).
struct ModEntry {
  std::string name;  // attribute name in the parent ("" for the root)
  std::string path;  // dotted path from the root
  ModEntry* parent = nullptr;
  const Node* op = nullptr;  // module op that constructs it; nullptr: plain nn.Module()
  std::vector<std::string> params, buffers;  // weight names registered directly here
  std::vector<ModEntry*> children;
  std::map<std::string, ModEntry*> by_name;
};

class PyEmitter {
 public:
  PyEmitter(const Graph& g, const PythonEmitOptions& opts, Diagnostics& diags)
      : g_(g), opts_(opts), diags_(diags) {}

  std::string run() {
    for (const Node* n : g_.all_nodes())
      if (is_quant_stub(n) || is_dequant_stub(n)) prepared_ = true;
    check_structure();
    build_module_tree();
    std::vector<std::string> init = emit_init();
    reserve_names();
    std::vector<std::string> params;
    for (Value* v : g_.inputs()) params.push_back(bind_name(v, "input"));
    std::vector<std::string> body;
    for (Node* n : g_.block()->nodes()) emit_node(*n, body);
    body.push_back(emit_return());
    std::vector<std::string> main_block = emit_main(params);

    std::ostringstream os;
    // No tool version here: regenerating with another tinytrace should not change the file.
    os << "\"\"\"" << class_name() << ": PyTorch module generated by tinytrace";
    if (!g_.name().empty()) os << " from the graph " << py_str(g_.name());
    os << ".\"\"\"\n";
    os << "import os\n\n";
    os << "import torch\n";
    for (const auto& imp : imports_) os << imp << "\n";
    os << "import torch.nn as nn\n";
    if (use_functional_) os << "import torch.nn.functional as F\n";
    os << "\n\n";
    os << "class " << class_name() << "(nn.Module):\n";
    os << "    def __init__(self):\n";
    os << "        super().__init__()\n";
    for (const auto& l : init) os << "        " << l << "\n";
    os << "\n";
    os << "    def forward(" << join([&] {
      std::vector<std::string> p = {"self"};
      p.insert(p.end(), params.begin(), params.end());
      return p;
    }(), ", ") << "):\n";
    for (const auto& l : body) os << "        " << l << "\n";
    os << "\n\n";
    os << "if __name__ == \"__main__\":\n";
    for (const auto& l : main_block) os << (l.empty() ? "" : "    ") << l << "\n";
    return os.str();
  }

 private:
  // -------------------------------------------------------------------------------------------
  // checks

  // Control flow is written as Python statements (Note [Control flow in Python]); any other
  // node with blocks, or a prim.If / prim.Loop not in the TorchScript form, cannot be.
  void check_structure() {
    for (Node* n : g_.all_nodes()) {
      if (n->blocks().empty()) continue;
      if (n->is("prim.If")) {
        bool ok = n->num_inputs() == 1 && n->blocks().size() == 2;
        for (const auto& b : n->blocks())
          ok = ok && b->inputs().empty() && b->outputs().size() == n->num_outputs();
        if (!ok)
          unsupported(*n, "prim.If needs one condition and two blocks without arguments, each returning one value per output",
                      "fix the node (see testdata/tir/control_flow.tir)");
      } else if (n->is("prim.Loop")) {
        bool ok = n->num_inputs() >= 2 && n->blocks().size() == 1 &&
                  n->block(0)->inputs().size() == n->num_inputs() - 1 &&
                  n->block(0)->outputs().size() == n->num_inputs() - 1 &&
                  n->num_outputs() == n->num_inputs() - 2;
        if (!ok)
          unsupported(*n, "prim.Loop needs inputs (max_trip_count, condition, carried...), one block with arguments "
                          "(iteration, carried...) returning (condition, carried...) and one output per carried value",
                      "fix the node (see testdata/tir/control_flow.tir)");
      } else {
        unsupported(*n, n->op() + " has nested blocks, which the Python emitter cannot write",
                    "only prim.If and prim.Loop may have blocks");
      }
    }
  }

  std::string class_name() const {
    std::string c = opts_.class_name.empty() ? "Model" : opts_.class_name;
    std::string out;
    for (char ch : c) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "Model" + out;
    if (is_py_keyword(out)) out += "_";
    if (python_reserved(out)) out += "Model";  // `class F` would shadow torch.nn.functional
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // __init__

  // The entry for `path`, created (with its missing ancestors) when needed. A new entry goes
  // right after the sibling that contains `after` (the module called just before it), else last.
  ModEntry* entry(const std::string& path, const std::string& after = "") {
    auto it = entries_.find(path);
    if (it != entries_.end()) return it->second;
    storage_.emplace_back();
    ModEntry* e = &storage_.back();
    e->path = path;
    entries_[path] = e;
    if (!path.empty()) {
      if (g_.weights().has(path))
        throw Error(ExitCode::Unsupported,
                    "'" + path + "' is both a weight and a module path — rename one of them");
      size_t dot = path.rfind('.');
      std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
      e->name = dot == std::string::npos ? path : path.substr(dot + 1);
      if (e->name.empty())
        throw Error(ExitCode::Unsupported, "module path '" + path + "' has an empty component");
      e->parent = entry(parent, after);
      auto& siblings = e->parent->children;
      auto pos = siblings.end();
      if (!after.empty()) {
        for (auto s = siblings.begin(); s != siblings.end(); ++s)
          if (after == (*s)->path || after.rfind((*s)->path + ".", 0) == 0) pos = std::next(s);
      }
      siblings.insert(pos, e);
      e->parent->by_name[e->name] = e;
    }
    return e;
  }

  void build_module_tree() {
    entry("");
    // Module ops and the weights they own.
    std::map<std::string, std::string> owner;  // weight name -> module path
    std::vector<const Node*> module_ops;
    for (Node* n : g_.all_nodes()) {  // calls inside if/loop bodies too, in program order
      if (n->module().empty()) continue;
      module_ops.push_back(n);
      module_calls_[n->module()].push_back(n);
      auto it = module_nodes_.find(n->module());
      if (it == module_nodes_.end()) {
        module_nodes_[n->module()] = n;
      } else if (it->second->op() != n->op()) {
        unsupported(*n, "module '" + n->module() + "' is called both as " + it->second->op() +
                            " and as " + n->op(),
                    "give the two calls different module paths");
      } else if (!same_attrs(*it->second, *n)) {
        diags_.warn("python-shared-module-attrs",
                    "module '" + n->module() + "' is called several times with different attributes; "
                    "the generated code constructs it with those of its first call",
                    n->num_outputs() ? n->output(0)->name() : "", n->scope(), n->loc());
      }
      for (const auto& [key, name] : n->weights()) {
        if (name != n->module() + "." + key)
          unsupported(*n, "its weight '" + key + "' refers to '" + name + "', but nn modules keep it as '" +
                              n->module() + "." + key + "'",
                      "rename the weight to match the module path");
        if (!g_.weights().has(name))
          unsupported(*n, "its weight '" + name + "' is not in the graph's weights",
                      "add the weight (the .tir weights section) or drop the reference");
        owner[name] = n->module();
      }
    }
    // Weights in state_dict order decide the order of containers and registrations.
    for (const std::string& name : g_.weights().names()) {
      auto own = owner.find(name);
      if (own != owner.end()) {
        entry(own->second);
        continue;
      }
      size_t dot = name.rfind('.');
      ModEntry* container = entry(dot == std::string::npos ? "" : name.substr(0, dot));
      (g_.weights().at(name).is_param ? container->params : container->buffers).push_back(name);
    }
    // Modules without weights (activations, pooling) are declared where they are first called,
    // so __init__ reads in the model's order: conv1, bn1, relu, maxpool, layer1, ...
    std::string last_called;
    for (const Node* n : module_ops) {
      entry(n->module(), last_called)->op = module_nodes_.at(n->module());
      last_called = n->module();
    }
  }

  static bool same_attrs(const Node& a, const Node& b) {
    const auto& x = a.attrs().items();
    const auto& y = b.attrs().items();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].first != y[i].first || !attr_equal(x[i].second, y[i].second)) return false;
    return true;
  }

  std::vector<std::string> emit_init() {
    std::vector<std::string> lines;
    emit_entry(*entries_.at(""), lines);
    return lines;
  }

  void emit_entry(const ModEntry& e, std::vector<std::string>& lines) {
    std::string here = self_path(e.path);
    if (e.parent) {
      std::string ctor = e.op ? module_ctor(*e.op) : "nn.Module()";
      lines.push_back(assign_attr(self_path(e.parent->path), e.name, ctor));
      if (e.op && prepared_) {
        std::string qconfig = module_qconfig(*e.op);
        if (!qconfig.empty()) lines.push_back(here + ".qconfig = " + qconfig);
      }
    }
    auto attr_of = [](const std::string& weight) {
      size_t dot = weight.rfind('.');
      return dot == std::string::npos ? weight : weight.substr(dot + 1);
    };
    for (const auto& w : e.params) {
      const at::Tensor& t = g_.weights().at(w).tensor;
      DType d = weight_dtype(w, t);
      std::string rhs = "nn.Parameter(" + empty_tensor(t, d);
      if (!is_float_dtype(d) && !is_complex_dtype(d)) rhs += ", requires_grad=False";
      rhs += ")";
      lines.push_back(assign_attr(here, attr_of(w), rhs));
    }
    for (const auto& w : e.buffers) {
      const at::Tensor& t = g_.weights().at(w).tensor;
      lines.push_back(here + ".register_buffer(" + py_str(attr_of(w)) + ", " +
                      empty_tensor(t, weight_dtype(w, t)) + ")");
    }
    for (const ModEntry* c : e.children) emit_entry(*c, lines);
  }

  DType weight_dtype(const std::string& name, const at::Tensor& t) const {
    if (!t.defined())
      throw Error(ExitCode::Internal, "weight '" + name + "' has no tensor — this is a bug in tinytrace");
    DType d = tensor_dtype(t);
    if (is_quantized_dtype(d) || d == DType::Unknown)
      throw Error(ExitCode::Unsupported, "weight '" + name + "' has a dtype (" +
                                             std::string(c10::toString(t.scalar_type())) +
                                             ") that cannot be declared in Python — convert it to float first");
    return d;
  }

  static std::string shape_args(at::IntArrayRef sizes) {
    if (sizes.empty()) return "()";
    std::vector<std::string> dims;
    for (int64_t s : sizes) dims.push_back(std::to_string(s));
    return join(dims, ", ");
  }

  static std::string empty_tensor(const at::Tensor& t, DType d) {
    std::string s = "torch.empty(" + shape_args(t.sizes());
    if (d != DType::F32) s += std::string(", dtype=") + dtype_python(d);
    return s + ")";
  }

  // Note [qconfig of float modules]
  // In a --quant-prep model (one with Quant/DeQuantStubs), a module that eager quantization cannot
  // run on quantized tensors sits in a float region (passes/float_fallback.cpp) and must also be
  // left alone by torch.ao.quantization.prepare/convert, which would otherwise observe nn.LSTM's
  // tuple output or swap nn.MultiheadAttention's out_proj for a quantized Linear: its own
  // `qconfig = None` wins over the model-wide qconfig the user sets. nn.Embedding(Bag) is
  // quantized weight-only (float in, float out), which eager mode supports only with
  // float_qparams_weight_only_qconfig (also under prepare_qat). Returns "" for other modules.
  std::string module_qconfig(const Node& n) {
    if (n.is("nn.Embedding") || n.is("nn.EmbeddingBag")) {
      use_alias("quant");
      return "quant.float_qparams_weight_only_qconfig";
    }
    const OpInfo* info = find_op(n.op());
    if (info && info->kind == OpKind::Module && info->qclass == QuantClass::Float)
      return "None  # " + n.op() + " stays float (no eager-mode quantized version)";
    return "";
  }

  std::string module_ctor(const Node& n) {
    // Composite intrinsic modules are built from their parts (Note [Composite modules] in
    // lib/ir/quant.h): nni.ConvReLU2d(nn.Conv2d(...), nn.ReLU()).
    if (const auto* parts = composite_parts(n.op())) {
      std::string prefix = n.op().substr(0, n.op().find('.'));
      if (import_aliases().count(prefix)) use_alias(prefix);
      std::vector<std::string> args;
      for (size_t i = 0; i < parts->size(); ++i)
        args.push_back(module_ctor_of(n, (*parts)[i].op, composite_part_attrs(n, i)));
      return n.op() + "(" + join(args, ", ") + ")";
    }
    return module_ctor_of(n, n.op(), n.attrs());
  }

  // The constructor call of module op `op` with attributes `attrs` (n: for errors and inplace).
  std::string module_ctor_of(const Node& n, const std::string& op, const Attrs& attrs) {
    size_t dot = op.find('.');
    std::string prefix = dot == std::string::npos ? "" : op.substr(0, dot);
    std::string callee;
    if (prefix == "nn") {
      callee = op;
    } else if (import_aliases().count(prefix)) {
      use_alias(prefix);
      callee = op;
    } else if (method_module_classes().count(prefix)) {
      callee = method_module_classes().at(prefix);
      use_alias(callee.substr(0, callee.find('.')));
    } else if (prefix == "torch" && dot != std::string::npos) {
      callee = op;
      std::string mod = op.substr(0, op.rfind('.'));
      if (mod != "torch" && mod != "torch.nn") imports_.insert("import " + mod);
    } else {
      unsupported(n, "module op '" + op + "' has no known Python class",
                  "add it to the op table in lib/ir/op_table.cpp");
    }
    if (method_module_classes().count(prefix)) return callee + "()";

    const auto& table = ctor_table();
    auto sig_it = table.find(op);
    const std::vector<CtorParam>* sig = sig_it == table.end() ? nullptr : &sig_it->second;
    std::vector<std::string> args;
    std::set<std::string> done;
    if (sig) {
      // Required arguments positionally (nn.Conv2d(3, 64, ...)), except kernel_size, which reads
      // better as a keyword; stop at the first one that cannot be positional.
      for (const auto& p : *sig) {
        if (p.def || p.name == "kernel_size" || !attrs.has(p.name)) break;
        args.push_back(module_attr_text(p.name, attrs.at(p.name)));
        done.insert(p.name);
      }
    }
    for (const auto& [name, value] : attrs.items()) {
      if (done.count(name)) continue;
      std::string text = module_attr_text(name, value);
      if (name == "inplace" && text == "True" && !inplace_is_safe(n.module())) text = "False";
      if (sig) {
        auto p = std::find_if(sig->begin(), sig->end(), [&](const CtorParam& c) { return c.name == name; });
        if (p != sig->end() && p->def && (*p->def == text || numeric_equal(*p->def, text))) continue;
      }
      args.push_back(name + "=" + text);
    }
    return callee + "(" + join(args, ", ") + ")";
  }

  // Note [In-place modules]
  // The IR is functional: a module that had inplace=True (nn.ReLU(inplace=True) in ResNet) is a
  // node whose input may still be read by a later node, for example after a pass rewired uses.
  // inplace=True is kept, for fidelity, only when every call mutates a tensor nothing else can
  // see: the input is used by that call alone and is a fresh result (not a graph input, weight,
  // view or possible alias of another value). Otherwise the module is built with inplace=False,
  // which gives the same numbers; inplace is not part of the state_dict.
  bool inplace_is_safe(const std::string& path) const {
    auto it = module_calls_.find(path);
    if (it == module_calls_.end()) return false;
    for (const Node* n : it->second) {
      if (n->num_inputs() == 0) continue;
      const Value* in = n->input(0);
      if (in->num_uses() != 1 || !fresh_value(in)) return false;
    }
    return true;
  }

  bool fresh_value(const Value* v) const {
    const Node* p = v->node();
    if (!p || p->owning_block() != g_.block() || p == g_.block()->param_node()) return false;
    if (!p->module().empty()) {
      static const std::set<std::string> aliasing = {"nn.Identity",    "nn.Flatten",  "nn.Unflatten",
                                                     "nn.Dropout",     "nn.Dropout1d", "nn.Dropout2d",
                                                     "nn.Dropout3d",   "nn.AlphaDropout",
                                                     "nn.FeatureAlphaDropout"};
      if (aliasing.count(p->op())) return false;
      if (p->attrs().get_bool("inplace", false)) {
        // Its result is its (mutated) input: fresh only if that input was.
        return p->num_inputs() > 0 && p->input(0)->num_uses() == 1 && fresh_value(p->input(0));
      }
      return find_op(p->op()) != nullptr;
    }
    const OpInfo* info = find_op(p->op());
    if (!info || (info->kind != OpKind::Function && info->kind != OpKind::Method)) return false;
    // Results that may share storage with an input.
    static const std::set<std::string> views = {
        "Tensor.view",   "Tensor.reshape",  "Tensor.view_as",  "Tensor.permute",   "Tensor.transpose",
        "Tensor.t",      "Tensor.expand",   "Tensor.expand_as", "Tensor.slice",    "Tensor.select",
        "Tensor.squeeze", "Tensor.unsqueeze", "Tensor.unflatten", "Tensor.contiguous", "Tensor.to",
        "Tensor.type_as", "Tensor.detach",  "Tensor.chunk",    "Tensor.split",     "Tensor.split_with_sizes",
        "Tensor.unbind", "torch.flatten",   "F.dropout",       "int",              "float"};
    return views.count(p->op()) == 0;
  }

  std::string module_attr_text(const std::string& name, const AttrValue& v) {
    if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
      bool uniform = !l->empty() && std::all_of(l->begin(), l->end(), [&](int64_t x) { return x == l->front(); });
      if (uniform && collapsible_module_attr(name)) return std::to_string(l->front());
      if (l->size() == 1 && name == "normalized_shape") return std::to_string(l->front());
      std::vector<std::string> items;
      for (int64_t x : *l) items.push_back(std::to_string(x));
      return items.size() == 1 ? "(" + items[0] + ",)" : "(" + join(items, ", ") + ")";
    }
    if (auto* l = std::get_if<std::vector<double>>(&v)) {
      bool uniform = !l->empty() && std::all_of(l->begin(), l->end(), [&](double x) { return x == l->front(); });
      if (uniform && collapsible_module_attr(name)) return py_float(l->front());
      std::vector<std::string> items;
      for (double x : *l) items.push_back(py_float(x));
      return items.size() == 1 ? "(" + items[0] + ",)" : "(" + join(items, ", ") + ")";
    }
    if (auto* l = std::get_if<std::vector<std::string>>(&v)) {
      std::vector<std::string> items;
      for (const auto& x : *l) items.push_back(py_str(x));
      return items.size() == 1 ? "(" + items[0] + ",)" : "(" + join(items, ", ") + ")";
    }
    return literal(v, Type::any()).text;
  }

  void use_alias(const std::string& alias) {
    auto it = import_aliases().find(alias);
    if (it != import_aliases().end()) imports_.insert("import " + it->second + " as " + alias);
  }

  // -------------------------------------------------------------------------------------------
  // names

  // Names the generated forward must not rebind: keywords, the modules it uses, and builtins
  // the generated code calls.
  static bool python_reserved(const std::string& s) {
    static const std::set<std::string> r = {"self", "torch", "nn", "F", "os", "getattr", "setattr",
                                            "float", "int", "super", "quant", "nni", "nniqat", "nnq", "nnqat",
                                            "bool", "len", "list", "abs", "math", "operator",
                                            // the other builtins the generated code calls: a value
                                            // named `any` made `any(state)` raise UnboundLocalError
                                            "any", "all", "sum", "range", "tuple", "isinstance", "print"};
    return is_py_keyword(s) || r.count(s) != 0;
  }

  static bool good_name(const std::string& s) { return is_identifier(s) && !python_reserved(s); }

  void reserve_names() {
    for (Value* v : g_.inputs())
      if (good_name(v->name())) taken_.insert(v->name());
    for (Node* n : g_.all_nodes()) {
      for (Value* v : n->outputs())
        if (good_name(v->name())) taken_.insert(v->name());
      for (const auto& b : n->blocks())
        for (Value* v : b->inputs())
          if (good_name(v->name())) taken_.insert(v->name());
    }
  }

  std::string unique(std::string hint) {
    std::string h;
    for (char c : hint) h += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    while (!h.empty() && h.front() == '_') h.erase(0, 1);
    while (!h.empty() && h.back() == '_') h.pop_back();
    if (h.empty()) h = "value";
    if (std::isdigit(static_cast<unsigned char>(h[0]))) h = "value_" + h;
    if (python_reserved(h)) h += "_";
    if (!taken_.count(h)) {
      taken_.insert(h);
      return h;
    }
    for (int i = 1;; ++i) {
      std::string c = h + "_" + std::to_string(i);
      if (!taken_.count(c)) {
        taken_.insert(c);
        return c;
      }
    }
  }

  // Gives `v` a Python name: its IR name when usable, else one derived from `hint`.
  std::string bind_name(Value* v, const std::string& hint) {
    const std::string& ir = v->name();
    std::string name;
    if (auto p = preferred_.find(v); p != preferred_.end()) {
      name = p->second;  // shares a variable with an if/loop result (Note [Control flow in Python])
    } else if (good_name(ir)) {
      name = ir;  // reserved up front; IR names are unique
    } else if (!ir.empty() && !all_digits(ir) && !std::isdigit(static_cast<unsigned char>(ir[0]))) {
      name = unique(ir);
    } else {
      name = unique(hint);
    }
    expr_[v] = Expr(name);
    return name;
  }

  static std::string op_hint(const std::string& op) {
    std::string s = op;
    size_t sep = s.find("::");
    if (sep != std::string::npos) {
      s = s.substr(sep + 2);
      s = s.substr(0, s.find('.'));
    } else {
      s = s.substr(s.rfind('.') + 1);
    }
    return s;
  }

  static std::string module_hint(const std::string& path) {
    auto comps = split(path, '.');
    std::string h = comps.back();
    for (size_t i = comps.size() - 1; i > 0 && !h.empty() && std::isdigit(static_cast<unsigned char>(h[0])); --i)
      h = comps[i - 1] + "_" + h;
    return h;
  }

  // -------------------------------------------------------------------------------------------
  // expressions

  const Expr& expr(const Value* v) const {
    auto it = expr_.find(v);
    TT_ASSERT(it != expr_.end(), "value %" + v->name() + " used before it was emitted");
    return it->second;
  }

  Expr literal(const AttrValue& a, const Type& t) {
    using K = Type::Kind;
    if (std::holds_alternative<NoneAttr>(a)) return {"None"};
    if (auto* b = std::get_if<bool>(&a)) {
      if (t.kind == K::Tensor) return {std::string("torch.tensor(") + (*b ? "True" : "False") + ")"};
      return {*b ? "True" : "False"};
    }
    if (auto* i = std::get_if<int64_t>(&a)) {
      switch (t.kind) {
        case K::ScalarType: return {dtype_python(dtype_from_scalar_type(*i))};
        case K::Layout:
          if (const char* s = layout_python(*i)) return {s};
          break;
        case K::MemoryFormat:
          if (const char* s = memory_format_python(*i)) return {s};
          break;
        case K::Tensor: return {"torch.tensor(" + std::to_string(*i) + ")"};
        default: break;
      }
      return {std::to_string(*i), *i >= 0};
    }
    if (auto* d = std::get_if<double>(&a)) {
      std::string s = py_float(*d);
      if (t.kind == K::Tensor) return {"torch.tensor(" + s + ")"};
      return {s, s[0] != '-'};
    }
    if (auto* s = std::get_if<std::string>(&a)) {
      if (t.kind == K::Device) return {"torch.device(" + py_str(*s) + ")"};
      return {py_str(*s)};
    }
    if (auto* l = std::get_if<std::vector<int64_t>>(&a)) {
      std::vector<std::string> items;
      for (int64_t x : *l) items.push_back(std::to_string(x));
      return {"[" + join(items, ", ") + "]", true, items};
    }
    if (auto* l = std::get_if<std::vector<double>>(&a)) {
      std::vector<std::string> items;
      for (double x : *l) items.push_back(py_float(x));
      return {"[" + join(items, ", ") + "]", true, items};
    }
    if (auto* l = std::get_if<std::vector<std::string>>(&a)) {
      std::vector<std::string> items;
      for (const auto& x : *l) items.push_back(py_str(x));
      return {"[" + join(items, ", ") + "]", true, items};
    }
    if (auto* d = std::get_if<DType>(&a)) return {dtype_python(*d)};
    if (auto* dev = std::get_if<DeviceAttr>(&a)) return {"torch.device(" + py_str(dev->name) + ")"};
    if (auto* t2 = std::get_if<at::Tensor>(&a)) return {tensor_literal(*t2)};
    throw Error(ExitCode::Internal, "unhandled constant kind — this is a bug in tinytrace");
  }

  std::string tensor_literal(const at::Tensor& t) {
    DType d = tensor_dtype(t);
    if (is_quantized_dtype(d) || is_complex_dtype(d) || d == DType::Unknown)
      throw Error(ExitCode::Unsupported,
                  std::string("a tensor constant of dtype ") + c10::toString(t.scalar_type()) +
                      " cannot be written as Python — store it as a buffer instead");
    if (t.numel() == 0) {
      std::string s = "torch.zeros(" + shape_args(t.sizes());
      if (d != DType::F32) s += std::string(", dtype=") + dtype_python(d);
      return s + ")";
    }
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    std::vector<std::string> flat;
    flat.reserve(c.numel());
    if (is_float_dtype(d)) {
      at::Tensor f = c.to(d == DType::F64 ? at::kDouble : at::kFloat);
      for (int64_t i = 0; i < f.numel(); ++i)
        flat.push_back(d == DType::F64 ? py_float(f.data_ptr<double>()[i]) : py_float(f.data_ptr<float>()[i]));
    } else if (d == DType::Bool) {
      at::Tensor b = c.to(at::kBool);
      for (int64_t i = 0; i < b.numel(); ++i) flat.push_back(b.data_ptr<bool>()[i] ? "True" : "False");
    } else {
      at::Tensor l = c.to(at::kLong);
      for (int64_t i = 0; i < l.numel(); ++i) flat.push_back(std::to_string(l.data_ptr<int64_t>()[i]));
    }
    // Nest the flat values by the shape.
    std::vector<int64_t> sizes = t.sizes().vec();
    size_t pos = 0;
    std::function<std::string(size_t)> nest = [&](size_t dim) -> std::string {
      if (dim == sizes.size()) return flat[pos++];
      std::vector<std::string> items;
      for (int64_t i = 0; i < sizes[dim]; ++i) items.push_back(nest(dim + 1));
      return "[" + join(items, ", ") + "]";
    };
    std::string body = nest(0);
    DType natural = is_float_dtype(d) ? DType::F32 : d == DType::Bool ? DType::Bool : DType::I64;
    std::string s = "torch.tensor(" + body;
    if (d != natural) s += std::string(", dtype=") + dtype_python(d);
    return s + ")";
  }

  // -------------------------------------------------------------------------------------------
  // forward

  // Writes `outs = rhs` for a node whose outputs get names from `hint`. Unused outputs become
  // `_`; when nothing is used, calls stay as a bare statement, except pure prims and the op
  // table's ops that do not mutate (x.dim() left over from a message the loader dropped).
  void assign(const Node& n, const std::string& rhs, const std::string& hint, bool pure,
              std::vector<std::string>& body) {
    bool any_used = std::any_of(n.outputs().begin(), n.outputs().end(),
                                [](const Value* v) { return v->has_uses(); });
    if (!any_used) {
      for (Value* v : n.outputs()) expr_[v] = Expr{"None"};
      const OpInfo* info = find_op(n.op());
      bool mutates = n.op().back() == '_' || n.num_outputs() == 0;
      bool known_pure = info && info->kind != OpKind::Module && !mutates && n.blocks().empty();
      if (!pure && !known_pure) body.push_back(rhs);
      return;
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      Value* v = n.output(i);
      if (!v->has_uses()) {
        names.push_back("_");
        expr_[v] = Expr{"None"};
        continue;
      }
      std::string h = n.num_outputs() == 1 || hint.empty() ? hint : hint + "_" + std::to_string(i);
      names.push_back(bind_name(v, h));
    }
    std::string lhs = join(names, ", ");
    if (names.size() == 1 && n.op() != "prim.TupleUnpack" && n.op() != "prim.ListUnpack") {
      body.push_back(lhs + " = " + rhs);
    } else if (names.size() == 1) {
      body.push_back(lhs + ", = " + rhs);
    } else {
      body.push_back(lhs + " = " + rhs);
    }
  }

  void emit_node(const Node& n, std::vector<std::string>& body) {
    const std::string& op = n.op();
    if (op == "prim.Constant") {
      const AttrValue* v = n.attrs().find("value");
      if (!v) unsupported(n, "the constant has no value", "give it a value attribute");
      expr_[n.output(0)] = literal(*v, n.output(0)->type());
      return;
    }
    if (op == "prim.GetAttr") {
      std::string w = n.weight("value");
      if (w.empty()) unsupported(n, "prim.GetAttr does not name a weight", "add @value=<weight name>");
      if (!g_.weights().has(w))
        unsupported(n, "it reads '" + w + "', which is not a weight of the graph", "add the weight");
      expr_[n.output(0)] = Expr{self_path(w)};
      return;
    }
    if (op == "prim.ListConstruct" || op == "prim.TupleConstruct") {
      std::vector<std::string> items;
      bool simple = true;
      for (Value* v : n.inputs()) {
        items.push_back(expr(v).text);
        simple = simple && v->constant() != nullptr;
      }
      bool list = op == "prim.ListConstruct";
      std::string text = list ? "[" + join(items, ", ") + "]"
                              : items.size() == 1 ? "(" + items[0] + ",)" : "(" + join(items, ", ") + ")";
      Value* out = n.output(0);
      if (simple || out->num_uses() <= 1) {
        Expr e{text};
        if (list) e.list_elems = items;
        expr_[out] = e;
      } else {
        assign(n, text, list ? "items" : "values", true, body);
      }
      return;
    }
    if (op == "prim.DictConstruct") {
      if (n.num_inputs() % 2 != 0) unsupported(n, "prim.DictConstruct needs (key, value) pairs", "fix the node");
      std::vector<std::string> items;
      for (size_t i = 0; i + 1 < n.num_inputs(); i += 2)
        items.push_back(expr(n.input(i)).text + ": " + expr(n.input(i + 1)).text);
      std::string text = "{" + join(items, ", ") + "}";
      if (n.output(0)->num_uses() <= 1) expr_[n.output(0)] = Expr{text};
      else assign(n, text, "results", true, body);
      return;
    }
    if (op == "prim.TupleUnpack" || op == "prim.ListUnpack") {
      std::string src = n.num_inputs() ? expr(n.input(0)).text : "()";
      std::string base = n.num_inputs() ? value_hint(n.input(0)) : "item";
      assign(n, src, base, true, body);
      return;
    }
    if (op == "prim.TupleIndex") {
      if (n.num_inputs() != 2) unsupported(n, "prim.TupleIndex needs (tuple, index)", "fix the node");
      std::string idx = expr(n.input(1)).text;
      std::string hint = value_hint(n.input(0)) + "_" + idx;
      assign(n, receiver(expr(n.input(0))) + "[" + idx + "]", hint, true, body);
      return;
    }
    if (op == "prim.NumToTensor") {
      if (n.num_inputs() != 1) unsupported(n, "prim.NumToTensor needs one input", "fix the node");
      assign(n, "torch.tensor(" + expr(n.input(0)).text + ")", value_hint(n.input(0)) + "_tensor", true, body);
      return;
    }
    if (op == "prim.If") {
      emit_if(n, body);
      return;
    }
    if (op == "prim.Loop") {
      emit_loop(n, body);
      return;
    }
    if (op == "bool" && n.num_inputs() == 1 && n.num_outputs() == 1 && is_condition_only(n.output(0))) {
      expr_[n.output(0)] = expr(n.input(0));  // `if t:` already calls bool(t)
      return;
    }
    if (!n.module().empty()) {
      emit_module_call(n, body);
      return;
    }
    if (op == "prim.RaiseException") {  // the model's own check: raise ValueError("...")
      std::string cls = "RuntimeError";
      if (n.num_inputs() > 1)
        if (const AttrValue* c = n.input(1)->constant())
          if (auto* s = std::get_if<std::string>(c); s && s->rfind("builtins.", 0) == 0) cls = s->substr(9);
      body.push_back("raise " + cls + "(" + (n.num_inputs() ? expr(n.input(0)).text : std::string()) + ")");
      return;
    }
    if (op == "prim.Uninitialized") {  // what a branch that raised "returns": never read
      expr_[n.output(0)] = Expr{"None"};
      return;
    }
    if (op.rfind("prim.", 0) == 0)
      unsupported(n, op + " is not supported by the Python emitter",
                  "run the passes that lower it or report it as a tinytrace bug");
    emit_call(n, body);
  }

  // -------------------------------------------------------------------------------------------
  // control flow
  //
  // Note [Control flow in Python]
  // - prim.If is `if cond:` / `else:`; each branch ends by assigning its results to the If's
  //   output variables (one parallel assignment). A value made in a branch only to be returned
  //   takes the output's variable directly (`y = F.relu(x)` rather than `r = ...; y = r`).
  //   An empty then-branch gives `if not cond:`, an else-branch holding one if statement `elif`.
  // - prim.Loop: one variable per loop-carried value, shared by the initial value, the block
  //   argument, the value returned at the end of an iteration and the Loop's output. It reuses
  //   the initial value's variable when nothing else reads that value. Forms: trip count with a
  //   constant-true condition -> `for i in range(n):` (`_` when i is unused); no trip count
  //   (None or INT64_MAX) -> `while cond:` with the condition variable re-assigned at the end of
  //   the body; both -> `for` with `if not cond: break`.
  // - The carried variables are rebound by one parallel assignment at the end of the body
  //   (`a, b = b, a` swaps correctly). A returned value takes its carried variable directly only
  //   when nothing reads the old value after it is made (can_take_loop_var); values a nested
  //   if/loop writes are never bound early into a carried variable.
  // - Block-local values keep their own unique names; Python scoping is per function, so a name
  //   defined in a branch is never read outside it (the IR does not allow it).

  // Emits a block's nodes into their own lines (indented by the caller).
  std::vector<std::string> emit_block(const Block& b) {
    std::vector<std::string> lines;
    for (Node* n = b.front(); n; n = n->next()) emit_node(*n, lines);
    return lines;
  }

  static void append_indented(const std::vector<std::string>& lines, std::vector<std::string>& out) {
    for (const auto& l : lines) out.push_back("    " + l);
  }

  // `a, b = x, y` for the pairs whose two sides differ ("" when none do).
  static std::string parallel_assign(const std::vector<std::string>& lhs, const std::vector<std::string>& rhs) {
    std::vector<std::string> l, r;
    for (size_t i = 0; i < lhs.size(); ++i)
      if (!lhs[i].empty() && lhs[i] != rhs[i]) {
        l.push_back(lhs[i]);
        r.push_back(rhs[i]);
      }
    if (l.empty()) return "";
    return join(l, ", ") + " = " + join(r, ", ");
  }

  // A value made by a node directly in `b` and returned once by b: it may be computed straight
  // into the variable the return goes to (its other readers in b come after it is made, so they
  // read that variable).
  bool returned_once(const Block& b, const Value* v) const {
    const Node* def = v->node();
    if (!def || def->owning_block() != &b || def == b.param_node() || preferred_.count(v) || v->constant())
      return false;
    size_t returns = 0;
    for (const Use& u : v->uses()) returns += u.user == b.return_node();
    return returns == 1;
  }

  // A loop's continue condition, looking through a `bool(t)` that is written as `t`.
  static Value* condition_source(Value* v) {
    Node* p = v->node();
    if (p && p->is("bool") && p->num_inputs() == 1 && is_condition_only(v) && p->input(0)->num_uses() == 1 &&
        p->input(0)->node() && p->input(0)->node()->owning_block() == p->owning_block())
      return p->input(0);
    return v;
  }

  // Used once, as the condition of an if or a loop (the value is only ever tested for truth).
  static bool is_condition_only(const Value* v) {
    if (v->num_uses() != 1) return false;
    const Use& u = v->uses()[0];
    if (u.user->is("prim.If")) return u.index == 0;
    if (u.user->is("prim.Loop")) return u.index == 1;
    const Block* b = u.user->owning_block();
    return u.index == 0 && b && u.user == b->return_node() && b->owning_node() &&
           b->owning_node()->is("prim.Loop");
  }

  std::string not_expr(const Expr& e) { return "not " + (e.atomic ? e.text : "(" + e.text + ")"); }

  void emit_if(const Node& n, std::vector<std::string>& body) {
    Expr cond = expr(n.input(0));
    std::vector<std::string> names(n.num_outputs());
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      Value* o = n.output(i);
      if (!o->has_uses()) {
        expr_[o] = Expr{"None"};
        continue;
      }
      std::string hint = "result";
      for (const auto& b : n.blocks()) {
        const std::string& r = b->outputs()[i]->name();
        if (good_name(r)) {
          hint = r;
          break;
        }
      }
      names[i] = bind_name(o, hint);
    }
    std::vector<std::string> branch[2];
    for (size_t bi = 0; bi < 2; ++bi) {
      const Block& b = *n.block(bi);
      for (size_t i = 0; i < names.size(); ++i)
        // A loop variable is still read in the branch until its end: never bind it early.
        if (!names[i].empty() && !loop_vars_.count(names[i]) && returned_once(b, b.outputs()[i]))
          preferred_[b.outputs()[i]] = names[i];
      branch[bi] = emit_block(b);
      std::vector<std::string> rhs;
      for (size_t i = 0; i < names.size(); ++i) rhs.push_back(names[i].empty() ? "" : expr(b.outputs()[i]).text);
      std::string a = parallel_assign(names, rhs);
      if (!a.empty()) branch[bi].push_back(a);
    }
    if (branch[0].empty() && !branch[1].empty()) {
      body.push_back("if " + not_expr(cond) + ":");
      append_indented(branch[1], body);
      return;
    }
    body.push_back("if " + cond.text + ":");
    if (branch[0].empty()) branch[0].push_back("pass");
    append_indented(branch[0], body);
    if (branch[1].empty()) return;
    // else: a single if statement -> elif
    bool single_if = branch[1][0].rfind("if ", 0) == 0;
    for (size_t i = 1; i < branch[1].size() && single_if; ++i) {
      const std::string& l = branch[1][i];
      single_if = l.rfind("    ", 0) == 0 || l == "else:" || l.rfind("elif ", 0) == 0;
    }
    if (single_if) {
      body.push_back("el" + branch[1][0]);
      body.insert(body.end(), branch[1].begin() + 1, branch[1].end());
      return;
    }
    body.push_back("else:");
    append_indented(branch[1], body);
  }

  // "h_2" and "h" are versions of one variable.
  static bool same_stem(const std::string& a, const std::string& b) {
    auto stem = [](const std::string& s) {
      size_t u = s.find_last_of('_');
      if (u != std::string::npos && u + 1 < s.size() && all_digits(s.substr(u + 1))) return s.substr(0, u);
      return s;
    };
    return stem(a) == stem(b);
  }

  static std::optional<bool> const_true_false(const Value* v) {
    const AttrValue* c = v->constant();
    if (!c) return std::nullopt;
    if (auto* b = std::get_if<bool>(c)) return *b;
    if (auto* i = std::get_if<int64_t>(c)) return *i != 0;
    return std::nullopt;
  }

  // Whether `ret`, returned by loop body `b` for the carried argument `param`, can be computed
  // straight into the carried variable: every read of the old value comes before (or is the
  // node computing it, whose inputs are read first), and none is through an inlined list/tuple
  // expression, which would be evaluated later. A nested loop assigns its variables before it
  // runs, so it must not read the old value at all.
  bool can_take_loop_var(const Block& b, const Value* param, const Value* ret) const {
    if (!returned_once(b, ret)) return false;
    const Node* def = ret->node();
    if (!def->blocks().empty() && !def->is("prim.If") && !def->is("prim.Loop")) return false;
    for (const Use& u : param->uses()) {
      const Node* a = u.user;
      if (a->is("prim.ListConstruct") || a->is("prim.TupleConstruct")) return false;
      while (a->owning_block() != &b) a = a->owning_block()->owning_node();
      // The return reads the old value at the very end, after `ret` was bound: no.
      if (a == b.return_node()) return false;
      if (a == def) {
        if (def->is("prim.Loop")) return false;
        continue;
      }
      if (!a->is_before(def)) return false;
    }
    return true;
  }

  void emit_loop(const Node& n, std::vector<std::string>& body) {
    const Block& blk = *n.block(0);
    const size_t k = n.num_outputs();
    const Value* trip = n.input(0);
    const AttrValue* trip_c = trip->constant();
    bool unbounded = trip_c && (std::holds_alternative<NoneAttr>(*trip_c) ||
                                (std::holds_alternative<int64_t>(*trip_c) &&
                                 std::get<int64_t>(*trip_c) == std::numeric_limits<int64_t>::max()));
    Value* init_cond = n.input(1);
    Value* body_cond = blk.outputs()[0];
    bool init_true = const_true_false(init_cond) == std::optional<bool>(true);
    bool body_true = const_true_false(body_cond) == std::optional<bool>(true);

    // One variable per carried value.
    std::vector<std::string> vars(k), before;
    for (size_t j = 0; j < k; ++j) {
      Value* out = n.output(j);
      Value* param = blk.inputs()[j + 1];
      Value* init = n.input(j + 2);
      const Expr& ie = expr(init);
      bool dead = !out->has_uses();
      for (const Use& u : param->uses()) dead = dead && u.user == blk.return_node() && u.index == j + 1;
      std::string name;
      if (dead) {
        // Nothing reads it: `_` keeps the body's last value computation pyflakes-clean (dce
        // would drop the whole carried value).
        vars[j] = "_";
        expr_[out] = Expr{"None"};
        expr_[param] = Expr{"_"};
        continue;
      }
      if (preferred_.count(out)) {
        name = bind_name(out, "");
      } else if (init->num_uses() == 1 && !init->constant() && is_identifier(ie.text) &&
                 !python_reserved(ie.text) && (!good_name(out->name()) || same_stem(out->name(), ie.text))) {
        name = ie.text;  // nothing else reads the initial value: the loop updates it in place
        expr_[out] = Expr(name);
      } else if (!good_name(out->name()) && good_name(param->name())) {
        name = param->name();  // reserved up front, like every IR name
        expr_[out] = Expr(name);
      } else {
        name = bind_name(out, is_identifier(ie.text) ? ie.text : "state");
      }
      if (ie.text != name) before.push_back(name + " = " + ie.text);
      vars[j] = name;
      expr_[param] = Expr(name);
      loop_vars_.insert(name);
    }
    for (size_t j = 0; j < k; ++j)
      if (vars[j] != "_" && can_take_loop_var(blk, blk.inputs()[j + 1], blk.outputs()[j + 1]))
        preferred_[blk.outputs()[j + 1]] = vars[j];

    Value* it = blk.inputs()[0];
    std::string it_name = it->has_uses() ? bind_name(it, "i") : "_";

    // The condition variable, when the condition is not constant true.
    bool need_cond = !(init_true && body_true);
    std::string cond_var;
    if (need_cond) {
      const Expr& ce = expr(init_cond);
      if (!init_true && init_cond->num_uses() == 1 && !init_cond->constant() && is_identifier(ce.text) &&
          !python_reserved(ce.text) && !loop_vars_.count(ce.text)) {
        cond_var = ce.text;
      } else if (good_name(body_cond->name()) && returned_once(blk, body_cond)) {
        cond_var = body_cond->name();  // reserved up front, like every IR name
      } else {
        cond_var = unique("cond");
      }
      if (returned_once(blk, body_cond)) {
        Value* src = condition_source(body_cond);
        preferred_[src] = cond_var;
        if (src != body_cond) preferred_[body_cond] = cond_var;
      }
    }

    bool use_for = !unbounded;
    std::vector<std::string> lines;
    if (use_for) {
      if (need_cond && !init_true) {
        if (expr(init_cond).text != cond_var) before.push_back(cond_var + " = " + expr(init_cond).text);
        lines.push_back("if not " + cond_var + ":");
        lines.push_back("    break");
      }
      body.insert(body.end(), before.begin(), before.end());
      body.push_back("for " + it_name + " in range(" + expr(trip).text + "):");
    } else {
      if (need_cond && expr(init_cond).text != cond_var) before.push_back(cond_var + " = " + expr(init_cond).text);
      if (it->has_uses()) before.push_back(it_name + " = 0");
      body.insert(body.end(), before.begin(), before.end());
      body.push_back("while " + (need_cond ? cond_var : std::string("True")) + ":");
    }
    std::vector<std::string> inner = emit_block(blk);
    lines.insert(lines.end(), inner.begin(), inner.end());

    std::vector<std::string> lhs = vars, rhs;
    for (size_t j = 0; j < k; ++j) rhs.push_back(expr(blk.outputs()[j + 1]).text);
    bool break_at_end = use_for && need_cond && init_true;
    if (need_cond) {
      std::string ct = expr(body_cond).text;
      if (break_at_end && const_true_false(body_cond) == std::optional<bool>(false)) {
        ct = "";  // runs once: a plain break below
      } else if (!(break_at_end && ct == cond_var)) {
        lhs.push_back(cond_var);
        rhs.push_back(ct);
      }
      if (break_at_end) {
        std::string a = parallel_assign(lhs, rhs);
        if (!a.empty()) lines.push_back(a);
        if (ct.empty()) {
          lines.push_back("break");
        } else {
          lines.push_back("if not " + cond_var + ":");
          lines.push_back("    break");
        }
        lhs.clear();
      }
    }
    if (!lhs.empty()) {
      std::string a = parallel_assign(lhs, rhs);
      if (!a.empty()) lines.push_back(a);
    }
    if (!use_for && it->has_uses()) lines.push_back(it_name + " += 1");
    if (lines.empty()) lines.push_back("pass");
    append_indented(lines, body);
  }

  std::string value_hint(const Value* v) const {
    auto it = expr_.find(v);
    if (it != expr_.end() && is_identifier(it->second.text)) return it->second.text;
    return "item";
  }

  void emit_module_call(const Node& n, std::vector<std::string>& body) {
    std::vector<std::string> args;
    for (Value* v : n.inputs()) args.push_back(expr(v).text);
    std::string callee = self_path(n.module());
    size_t dot = n.op().find('.');
    std::string prefix = n.op().substr(0, dot);
    if (method_module_classes().count(prefix)) callee += n.op().substr(dot);  // self.ff.add
    assign(n, callee + "(" + join(args, ", ") + ")", module_hint(n.module()), false, body);
  }

  // The overloads the node may stand for: those with room for all its inputs and whose argument
  // types fit its constant inputs (so conv2d's `str padding` overload does not veto dropping
  // padding=[0, 0]).
  std::vector<const c10::FunctionSchema*> candidate_schemas(const Node& n, const OpInfo* info) {
    std::vector<const c10::FunctionSchema*> out;
    std::vector<std::string> names;
    if (info && !not_in_aten_order(info->name)) names = info->aten;
    else if (!info && n.op().find("::") != std::string::npos) names.push_back(n.op());
    for (const auto& q : names) {
      const c10::FunctionSchema* s = find_schema(q);
      if (!s || s->arguments().size() < n.num_inputs()) continue;
      bool fits = true;
      for (size_t i = 0; i < n.num_inputs() && fits; ++i)
        if (const AttrValue* c = n.input(i)->constant()) fits = constant_fits(*c, s->arguments()[i]);
      if (fits) out.push_back(s);
    }
    return out;
  }

  // Function rows whose inputs are not in ATen order (see Note [Op table rows]); their keyword
  // defaults come from the Python signature instead of a schema.
  static bool not_in_aten_order(const std::string& op) { return op == "F.interpolate"; }

  static std::string python_default(const std::string& op, const std::string& keyword) {
    static const std::map<std::pair<std::string, std::string>, std::string> defaults = {
        {{"F.interpolate", "size"}, "None"},
        {{"F.interpolate", "scale_factor"}, "None"},
        {{"F.interpolate", "mode"}, "\"nearest\""},
        {{"F.interpolate", "align_corners"}, "None"},
        {{"torch.tensor", "dtype"}, "None"},
        {{"torch.tensor", "device"}, "None"},
        {{"torch.tensor", "requires_grad"}, "False"},
    };
    auto it = defaults.find({op, keyword});
    return it == defaults.end() ? std::string("\x01") : it->second;  // \x01: never a literal
  }

  static bool constant_fits(const AttrValue& c, const c10::Argument& arg) {
    c10::TypePtr t = arg.type();
    bool optional = false;
    if (auto o = t->cast<c10::OptionalType>()) {
      t = o->getElementType();
      optional = true;
    }
    bool str = t->kind() == c10::TypeKind::StringType;
    bool list = t->kind() == c10::TypeKind::ListType;
    if (std::holds_alternative<NoneAttr>(c)) return optional || t->kind() == c10::TypeKind::NoneType;
    if (std::holds_alternative<std::string>(c)) return str;
    if (std::holds_alternative<std::vector<int64_t>>(c) || std::holds_alternative<std::vector<double>>(c) ||
        std::holds_alternative<std::vector<std::string>>(c))
      return list;
    return !str;
  }

  static ArgFacts arg_facts(const std::vector<const c10::FunctionSchema*>& schemas, size_t i) {
    ArgFacts f;
    if (schemas.empty()) return f;
    f.known = true;
    f.kwarg_only = true;
    f.name = schemas[0]->arguments()[i].name();
    auto fixed = [](const c10::Argument& a) -> std::optional<int> {
      if (a.N()) return static_cast<int>(*a.N());
      return std::nullopt;
    };
    f.fixed_size = fixed(schemas[0]->arguments()[i]);
    for (const auto* s : schemas) {
      const auto& a = s->arguments()[i];
      f.kwarg_only = f.kwarg_only && a.kwarg_only();
      if (a.name() != f.name) f.name.clear();
      if (fixed(a) != f.fixed_size) f.fixed_size.reset();
    }
    return f;
  }

  static bool is_default_in_all(const std::vector<const c10::FunctionSchema*>& schemas, size_t i,
                                const AttrValue* c) {
    if (!c || schemas.empty()) return false;
    for (const auto* s : schemas) {
      const auto& d = s->arguments()[i].default_value();
      if (!d || !matches_default(*c, *d)) return false;
    }
    return true;
  }

  struct CallArgs {
    std::vector<Expr> positional;
    std::vector<std::pair<std::string, Expr>> keyword;
  };

  CallArgs call_args(const Node& n, const OpInfo* info, size_t first) {
    auto schemas = candidate_schemas(n, info);
    struct Item {
      std::string key;
      Expr e;
      bool droppable;
    };
    std::vector<Item> pos, kw;
    for (size_t i = first; i < n.num_inputs(); ++i) {
      ArgFacts facts = arg_facts(schemas, i);
      std::string role;
      if (info && i < info->py_args.size()) role = info->py_args[i];
      else if (facts.known && facts.kwarg_only && !facts.name.empty()) role = facts.name;
      if (role == "-") continue;
      const Value* v = n.input(i);
      const AttrValue* c = v->constant();
      Expr e = expr(v);
      if (c && facts.fixed_size) {
        if (auto* l = std::get_if<std::vector<int64_t>>(c)) {
          if (static_cast<int>(l->size()) == *facts.fixed_size && !l->empty() &&
              std::all_of(l->begin(), l->end(), [&](int64_t x) { return x == l->front(); }))
            e = Expr{std::to_string(l->front()), l->front() >= 0};
        }
      }
      bool is_default = is_default_in_all(schemas, i, c);
      // Rows without a dispatcher schema (F.interpolate's order, TorchScript-only torch.tensor) take
      // their keyword defaults from the Python signature.
      if (info && (not_in_aten_order(info->name) || schemas.empty()) && !role.empty())
        is_default = python_default(info->name, role) == e.text;
      // Tensor options a trace records although they are what PyTorch does anyway: the strided
      // layout, unpinned memory and the CPU device. Dropping the device also
      // lets x.new_zeros(...) / zeros_like(x) follow x to another device, as eager code does.
      // A positional one (x.to(torch.device("cpu"))) says what the call does: kept.
      std::string arg = role.empty() ? facts.name : role;
      bool keyword = facts.kwarg_only || !role.empty();
      if (keyword && ((arg == "layout" && e.text == "torch.strided") || (arg == "pin_memory" && e.text == "False") ||
                      (arg == "device" && e.text == "torch.device(\"cpu\")")))
        is_default = true;
      if (role.empty())
        pos.push_back({"", e, is_default});
      else
        kw.push_back({role, e, is_default});
    }
    while (!pos.empty() && pos.back().droppable) pos.pop_back();
    CallArgs out;
    for (auto& p : pos) out.positional.push_back(p.e);
    for (auto& k : kw)
      if (!k.droppable) out.keyword.emplace_back(k.key, k.e);
    return out;
  }

  static std::string format_args(const CallArgs& a, bool splat_single_list = false) {
    std::vector<std::string> items;
    if (splat_single_list && a.positional.size() == 1 && a.positional[0].list_elems &&
        !a.positional[0].list_elems->empty()) {
      items = *a.positional[0].list_elems;
    } else {
      for (const auto& e : a.positional) items.push_back(e.text);
    }
    for (const auto& [k, e] : a.keyword) items.push_back(k + "=" + e.text);
    return join(items, ", ");
  }

  // The callee for a function op name, noting the imports it needs; "" when it has no spelling.
  std::string function_callee(const std::string& op) {
    size_t dot = op.find('.');
    std::string prefix = dot == std::string::npos ? "" : op.substr(0, dot);
    if (prefix == "F") {
      use_functional_ = true;
      return op;
    }
    if (prefix == "torch" || prefix == "nn") return op;
    if (import_aliases().count(prefix)) {
      use_alias(prefix);
      return op;
    }
    if (prefix == "math" || prefix == "operator") {
      imports_.insert("import " + prefix);
      return op;
    }
    if (prefix.empty() && is_identifier(op)) return op;  // a builtin such as int / float / len
    return "";
  }

  static std::string torch_ops_callee(const std::string& op) {
    size_t sep = op.find("::");
    std::string ns = op.substr(0, sep);
    std::vector<std::string> comps = {ns};
    for (const auto& c : split(op.substr(sep + 2), '.')) comps.push_back(c);
    return attr_path("torch.ops", comps);
  }

  void emit_call(const Node& n, std::vector<std::string>& body) {
    const std::string& op = n.op();
    const OpInfo* info = find_op(op);
    OpKind kind;
    if (info) {
      kind = info->kind;
    } else if (op.find("::") != std::string::npos) {
      kind = OpKind::Aten;
    } else if (op.rfind("Tensor.", 0) == 0) {
      kind = OpKind::Method;
    } else {
      kind = OpKind::Function;
    }
    if (kind == OpKind::Module)
      unsupported(n, "module op " + op + " has no module path", "set its #module=<path>");
    if (kind == OpKind::Prim)
      unsupported(n, op + " is not supported by the Python emitter", "report it as a tinytrace bug");

    std::string hint = op_hint(op);
    if (kind == OpKind::Aten || op.find("::") != std::string::npos) {
      if (op.find("::") == std::string::npos)
        unsupported(n, "aten op '" + op + "' has no qualified name", "name it 'aten::name.overload'");
      if (try_index_put(n, hint, body)) return;
      if (std::string s = try_index_or_fill(n); !s.empty()) {
        assign(n, s, hint, false, body);
        return;
      }
      CallArgs a = call_args(n, nullptr, 0);
      assign(n, torch_ops_callee(op) + "(" + format_args(a) + ")", hint, false, body);
      return;
    }
    if (std::string infix = try_infix(n); !infix.empty()) {
      assign(n, infix, hint, false, body);
      return;
    }
    if (op == "Tensor.slice") {
      // Tensor has no .slice method: indexing when the dim is known, else the ATen op.
      std::string s = try_slice(n);
      if (s.empty()) s = torch_ops_callee("aten::slice.Tensor") + "(" + format_args(call_args(n, info, 0)) + ")";
      assign(n, s, hint, false, body);
      return;
    }
    if (is_attribute_op(op) && n.num_inputs() == 1) {
      // an attribute, not a method
      assign(n, receiver(expr(n.input(0))) + op.substr(op.find('.')), hint, true, body);
      return;
    }
    if (kind == OpKind::Method) {
      if (n.num_inputs() == 0) unsupported(n, "a method call needs a receiver", "fix the node's inputs");
      std::string method = op.substr(op.rfind('.') + 1);
      CallArgs a = call_args(n, info, 1);
      static const std::set<std::string> splat = {"view", "reshape", "permute", "expand", "repeat"};
      std::string call = receiver(expr(n.input(0))) + "." + method + "(" +
                         format_args(a, splat.count(method) != 0) + ")";
      assign(n, call, hint, false, body);
      return;
    }
    std::string callee = function_callee(op);
    if (callee.empty())
      unsupported(n, "op '" + op + "' has no known Python spelling",
                  "add it to the op table in lib/ir/op_table.cpp");
    CallArgs a = call_args(n, info, 0);
    assign(n, callee + "(" + format_args(a) + ")", hint, false, body);
  }

  // torch.add/sub/mul/div as infix operators when that is the same call; Python's operator.*
  // (int/float/bool arithmetic of scripted models) always.
  std::string try_infix(const Node& n) {
    if (n.op() == "operator.getitem" && n.num_inputs() == 2)  // a list, tuple or dict item
      return receiver(expr(n.input(0))) + "[" + expr(n.input(1)).text + "]";
    if (n.op() == "list.slice" && n.num_inputs() == 4) {  // l[start:end:step]
      std::vector<std::string> parts;
      for (size_t i = 1; i < 4; ++i) parts.push_back(n.input(i)->is_none_constant() ? "" : expr(n.input(i)).text);
      return receiver(expr(n.input(0))) + "[" + python_slice(parts[0], parts[1], parts[2]) + "]";
    }
    if (n.op() == "operator.contains" && n.num_inputs() == 2)  // operator.contains(a, b) is `b in a`
      return receiver(expr(n.input(1))) + " in " + receiver(expr(n.input(0)));
    if (const char* sym = python_binary_operator(n.op()); sym && n.num_inputs() == 2) {
      std::string lhs = receiver(expr(n.input(0)));
      if (std::string(sym) == "**" && !lhs.empty() && lhs[0] == '-') lhs = "(" + lhs + ")";  // (-2) ** x
      return lhs + " " + sym + " " + expr(n.input(1)).text;
    }
    static const std::map<std::string, std::string> comparisons = {
        {"torch.gt", ">"}, {"torch.lt", "<"}, {"torch.ge", ">="}, {"torch.le", "<="},
        {"torch.eq", "=="}, {"torch.ne", "!="}};
    if (auto p = comparisons.find(n.op());
        p != comparisons.end() && n.num_inputs() == 2 && !n.input(0)->constant())  // tensor on the left
      return receiver(expr(n.input(0))) + " " + p->second + " " + expr(n.input(1)).text;
    if (const char* sym = python_unary_operator(n.op()); sym && n.num_inputs() == 1)
      return std::string(sym) == "not" ? not_expr(expr(n.input(0))) : sym + receiver(expr(n.input(0)));
    static const std::map<std::string, std::string> ops = {
        {"torch.add", "+"}, {"torch.sub", "-"}, {"torch.mul", "*"}, {"torch.div", "/"}};
    auto it = ops.find(n.op());
    if (it == ops.end() || n.num_inputs() < 2 || n.num_inputs() > 3) return "";
    if (n.num_inputs() == 3) {
      const AttrValue* c = n.input(2)->constant();
      if (!c) return "";
      if (n.op() == "torch.div") {
        if (!std::holds_alternative<NoneAttr>(*c)) return "";  // rounding_mode
      } else if (n.op() == "torch.mul") {
        return "";
      } else {
        bool one = (std::holds_alternative<int64_t>(*c) && std::get<int64_t>(*c) == 1) ||
                   (std::holds_alternative<double>(*c) && std::get<double>(*c) == 1.0);
        if (!one) return "";  // alpha
      }
    }
    return expr(n.input(0)).text + " " + it->second + " " + expr(n.input(1)).text;
  }

  // aten::index.Tensor(self, indices) as x[i, :, j] when the indices are a list literal (None:
  // that dim is taken whole); an in-place op kept as such (aten::fill_, aten::clamp_, ...;
  // Note [In-place writes]) as the Tensor method x.fill_(value), which writes where the model
  // wrote (often through a view). "" when neither applies.
  std::string try_index_or_fill(const Node& n) {
    const std::string& op = n.op();
    std::string_view method = tensor_inplace_method_of(op);
    if (n.num_inputs() >= 1 && !method.empty())
      return receiver(expr(n.input(0))) + "." + std::string(method) + "(" + format_args(call_args(n, nullptr, 1)) + ")";
    if (op != "aten::index.Tensor" || n.num_inputs() != 2) return "";
    std::string subs = index_subscripts(*n.input(1));
    return subs.empty() ? "" : receiver(expr(n.input(0))) + "[" + subs + "]";
  }

  // The subscripts "i, :, j" of an index list literal [i, None, j] (None: that dim is taken
  // whole; trailing ones dropped); "" when the list is not a literal or has only None.
  std::string index_subscripts(const Value& indices) {
    const Node* list = indices.node();
    if (!list->is("prim.ListConstruct") || list->num_inputs() == 0) return "";
    std::vector<std::string> subs;
    for (const Value* v : list->inputs()) subs.push_back(v->is_none_constant() ? ":" : expr(v).text);
    while (!subs.empty() && subs.back() == ":") subs.pop_back();  // x[i, :] is x[i]
    return join(subs, ", ");
  }

  // x.index_put_([i, None, j], v) without accumulation (TorchScript's x[i, :, j] = v) as that
  // assignment: Python's Tensor.index_put_ takes no None index. Its result is x itself.
  bool try_index_put(const Node& n, const std::string& hint, std::vector<std::string>& body) {
    if (tensor_inplace_method_of(n.op()) != "index_put_" || n.num_inputs() < 3 || n.num_inputs() > 4) return false;
    if (n.num_inputs() == 4) {
      const AttrValue* acc = n.input(3)->constant();
      if (!acc || !std::holds_alternative<bool>(*acc) || std::get<bool>(*acc)) return false;
    }
    std::string subs = index_subscripts(*n.input(1));
    if (subs.empty()) return false;
    std::string target = receiver(expr(n.input(0)));
    body.push_back(target + "[" + subs + "] = " + expr(n.input(2)).text);
    if (is_identifier(target) && n.num_outputs() == 1)
      expr_[n.output(0)] = expr(n.input(0));  // the same tensor, under its name
    else
      assign(n, target, hint, /*pure=*/true, body);
    return true;
  }

  // aten::slice(self, dim=0, start=None, end=None, step=1) as x[:, a:b:s].
  std::string try_slice(const Node& n) {
    if (n.num_inputs() < 1 || n.num_inputs() > 5) return "";
    auto const_int = [&](size_t i, std::optional<int64_t>& out) -> bool {
      // true when the argument is absent, None or a constant int
      if (i >= n.num_inputs()) return true;
      const AttrValue* c = n.input(i)->constant();
      if (!c) return false;
      if (std::holds_alternative<NoneAttr>(*c)) return true;
      if (auto* v = std::get_if<int64_t>(c)) {
        out = *v;
        return true;
      }
      return false;
    };
    std::optional<int64_t> dim, start, end, step;
    if (!const_int(1, dim)) return "";
    if (!const_int(4, step)) return "";
    if (step && *step <= 0) return "";
    int64_t d = dim.value_or(0);
    std::string lo, hi;
    if (n.num_inputs() > 2) {
      if (const_int(2, start)) {
        if (start && *start != 0) lo = std::to_string(*start);
      } else {
        lo = expr(n.input(2)).text;
      }
    }
    if (n.num_inputs() > 3) {
      if (const_int(3, end)) {
        if (end && *end != std::numeric_limits<int64_t>::max()) hi = std::to_string(*end);
      } else {
        hi = expr(n.input(3)).text;
      }
    }
    std::string s = lo + ":" + hi;
    if (step && *step != 1) s += ":" + std::to_string(*step);
    std::vector<std::string> idx;
    if (d >= 0) {
      idx.assign(static_cast<size_t>(d), ":");
      idx.push_back(s);
    } else {
      idx.push_back("...");
      idx.push_back(s);
      for (int64_t i = -1; i > d; --i) idx.push_back(":");
    }
    return receiver(expr(n.input(0))) + "[" + join(idx, ", ") + "]";
  }

  std::string emit_return() {
    const auto& outs = g_.outputs();
    if (outs.empty()) return "return None";
    std::vector<std::string> items;
    for (Value* v : outs) items.push_back(expr(v).text);
    return "return " + join(items, ", ");
  }

  // -------------------------------------------------------------------------------------------
  // __main__

  std::vector<std::string> emit_main(const std::vector<std::string>& forward_params) {
    std::set<std::string> used = {"model", "weights_path", "torch", "nn", "F", "os",
                                  "print", "tuple", "isinstance", class_name()};
    for (const auto& [alias, mod] : import_aliases()) used.insert(alias);
    auto fresh = [&](std::string h) {
      if (!used.count(h)) {
        used.insert(h);
        return h;
      }
      for (int i = 1;; ++i) {
        std::string c = h + "_" + std::to_string(i);
        if (!used.count(c)) {
          used.insert(c);
          return c;
        }
      }
    };
    std::vector<std::string> lines;
    lines.push_back("model = " + class_name() + "()");
    lines.push_back("weights_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), " +
                    py_str(opts_.weights_file) + ")");
    lines.push_back("model.load_state_dict(torch.load(weights_path), strict=True)");
    lines.push_back("model.eval()");

    std::vector<InputSpec> specs = example_specs();
    if (specs.size() != g_.inputs().size() || (g_.inputs().size() > 0 && specs.empty())) {
      lines.push_back(
          "print(\"example input shapes are unknown: re-run tinytrace with --input-shape to get "
          "example inputs\")");
      return lines;
    }
    lines.push_back("torch.manual_seed(0)");
    std::vector<std::string> args;
    for (size_t i = 0; i < specs.size(); ++i) {
      std::string name = fresh(forward_params[i]);
      args.push_back(name);
      lines.push_back(name + " = " + example_tensor(specs[i]));
    }
    // Outputs: a returned tuple/list is unpacked into its elements' names.
    std::vector<const Value*> elems;
    bool unpack = false;
    const auto& outs = g_.outputs();
    if (outs.size() == 1) {
      const Node* p = outs[0]->node();
      if (p && (p->op() == "prim.TupleConstruct" || p->op() == "prim.ListConstruct") &&
          p->owning_block() == g_.block()) {
        elems.assign(p->inputs().begin(), p->inputs().end());
        unpack = true;
      } else {
        elems.push_back(outs[0]);
      }
    } else {
      elems.assign(outs.begin(), outs.end());
      unpack = true;
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < elems.size(); ++i) {
      std::string h = unpack ? value_hint(elems[i]) : "output";
      if (h == "item") h = "output_" + std::to_string(i);
      names.push_back(fresh(h));
    }
    std::string call = "model(" + join(args, ", ") + ")";
    lines.push_back("with torch.no_grad():");
    if (names.empty())
      lines.push_back("    " + call);
    else if (unpack && names.size() == 1)
      lines.push_back("    " + names[0] + ", = " + call);
    else
      lines.push_back("    " + join(names, ", ") + " = " + call);
    for (size_t i = 0; i < names.size(); ++i) {
      const Type& t = elems[i]->type();
      const std::string& nm = names[i];
      std::string what;
      if (t.is_tensor())
        what = "tuple(" + nm + ".shape)";
      else if (t.kind == Type::Kind::Any)
        what = "tuple(" + nm + ".shape) if isinstance(" + nm + ", torch.Tensor) else " + nm;
      else
        what = nm;
      lines.push_back("print(" + py_str(nm + ":") + ", " + what + ")");
    }
    return lines;
  }

  std::vector<InputSpec> example_specs() const {
    if (!opts_.example_inputs.empty()) {
      if (opts_.example_inputs.size() != g_.inputs().size())
        throw Error(ExitCode::Usage, std::to_string(opts_.example_inputs.size()) +
                                         " example input shape(s) given but the model takes " +
                                         std::to_string(g_.inputs().size()) +
                                         " input(s) — pass --input-shape once per input");
      return opts_.example_inputs;
    }
    std::vector<InputSpec> specs;
    for (const Value* v : g_.inputs()) {
      const Type& t = v->type();
      if (!t.is_complete()) return {};
      specs.push_back({*t.shape, t.dtype});
    }
    return specs;
  }

  static std::string example_tensor(const InputSpec& s) {
    std::vector<std::string> dims;
    for (int64_t d : s.shape) dims.push_back(std::to_string(d));
    std::string shape_tuple = dims.empty() ? "()" : dims.size() == 1 ? "(" + dims[0] + ",)" : "(" + join(dims, ", ") + ")";
    std::string shape_args = dims.empty() ? "()" : join(dims, ", ");
    if (is_float_dtype(s.dtype) || is_complex_dtype(s.dtype)) {
      std::string r = "torch.randn(" + shape_args;
      if (s.dtype != DType::F32) r += std::string(", dtype=") + dtype_python(s.dtype);
      return r + ")";
    }
    if (s.dtype == DType::Bool) return "torch.randint(0, 2, " + shape_tuple + ", dtype=torch.bool)";
    std::string r = "torch.randint(0, 10, " + shape_tuple;
    if (s.dtype != DType::I64) r += std::string(", dtype=") + dtype_python(s.dtype);
    return r + ")";
  }

  const Graph& g_;
  const PythonEmitOptions& opts_;
  Diagnostics& diags_;
  bool prepared_ = false;  // the graph has Quant/DeQuantStubs (--quant-prep)

  std::deque<ModEntry> storage_;
  std::map<std::string, ModEntry*> entries_;
  std::map<std::string, const Node*> module_nodes_;
  std::map<std::string, std::vector<const Node*>> module_calls_;

  std::set<std::string> taken_;
  std::unordered_map<const Value*, Expr> expr_;
  // Values that take the variable of the if/loop result they become (Note [Control flow in Python]).
  std::unordered_map<const Value*, std::string> preferred_;
  // Variables of loop-carried values: rebound at the end of each iteration.
  std::set<std::string> loop_vars_;
  std::set<std::string> imports_;
  bool use_functional_ = false;
};

}  // namespace

std::string emit_python(const Graph& g, const PythonEmitOptions& opts, Diagnostics& diags) {
  return PyEmitter(g, opts, diags).run();
}

}  // namespace tt
