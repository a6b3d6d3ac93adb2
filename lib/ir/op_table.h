// The op table: one row of data per op tinytrace knows, shared by the loaders (ATen -> IR op),
// the Python/TorchScript emitters (IR op -> Python call), the interpreter (IR op -> ATen
// overloads) and the quantization passes (quantization class).
//
// Note [Op naming]
// - Module ops: "nn.Conv2d", "nn.BatchNorm2d", ... Their attributes are exactly the keyword
//   arguments of the torch.nn constructor (in_channels, out_channels, kernel_size, stride, ...),
//   so the emitter writes `nn.Conv2d(in_channels=3, ...)` generically. Their weights are
//   referenced by the constructor's parameter names ("weight", "bias", "running_mean", ...).
//   Inputs are the module call's arguments.
// - Function ops: "torch.cat", "F.relu", "torch.ops.aten.foo" ...; inputs are in ATen schema
//   order. `py_args` maps each ATen input position to the Python spelling.
// - Method ops: "Tensor.view": first input is the receiver (`x.view(...)`).
// - Prim ops: "prim.Constant", "prim.ListConstruct", "prim.TupleConstruct", "prim.TupleUnpack",
//   "prim.ListUnpack", "prim.GetAttr" (a weight read: `self.a.b`), "prim.If", "prim.Loop", ...
// - Unknown ATen ops keep "aten::name.overload" and are emitted as
//   torch.ops.aten.name.overload(*inputs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tt {

class Node;

enum class OpKind : int8_t { Prim, Module, Function, Method, Aten };

// How an op behaves under PyTorch eager-mode quantization (DESIGN.md §5).
enum class QuantClass : int8_t {
  Unknown,
  Native,           // runs on quantized tensors (relu, pooling, view, ...)
  NeedsModule,      // works only as a module swapped at convert time (Conv, Linear, BN, ...)
  FloatFunctional,  // needs FloatFunctional (add, mul, cat, ...)
  Float,            // must stay float (matmul, softmax, exp, ...)
  Shape,            // not a tensor computation (sizes, constants, lists)
};

struct OpInfo {
  std::string name;  // IR op name: "F.relu", "Tensor.view", "nn.Conv2d"
  OpKind kind;
  // ATen overloads this op lowers to, in order of preference ("aten::add.Tensor",
  // "aten::add.Scalar"); for module ops, the ATen op found in the module's forward.
  std::vector<std::string> aten;
  // Python spelling per ATen input position: "" positional, "name" keyword, "-" dropped
  // (e.g. cudnn_enabled), "=" dropped where it is the schema's default (Note [Op table rows]).
  // Empty vector: all positional.
  std::vector<std::string> py_args;
  QuantClass qclass = QuantClass::Unknown;
  std::string summary;  // one line, for `tinytrace passes`-style listings and docs
  // What the op does beyond computing its outputs: OpFact bits (Note [Op facts]).
  uint32_t facts = 0;
  // Module ops that functional-to-module makes from a functional op: the ATen op the functional
  // form lowers to ("aten::relu" for nn.ReLU) and the stem of the new module's attribute name
  // ("relu" -> self.relu, self.relu_1, ...). Empty for every other row.
  std::string functional_aten{};
  std::string attr_stem{};
};

// Note [Op facts]
// Facts the passes, the interpreter and the emitters ask about an op, kept on its row (set in
// lib/ir/op_table.cpp, next to the rows) instead of in lists inside each user.
enum OpFact : uint32_t {
  // A prim op that only computes its outputs from its inputs (no effect, no failure to keep).
  kPureOp = 1u << 0,
  // Its (single) output has the shape and dtype of its first input (infer-shapes uses this
  // before running an op that may lack a meta kernel: Note [Shape rules]).
  kKeepsInputShape = 1u << 1,
  // A module op whose result is its input in eval mode (identity, dropout, flatten of a
  // contiguous tensor, the quantization stubs before convert): the result may alias the input.
  kReturnsInput = 1u << 2,
  // A module op whose constructor has the `inplace` keyword.
  kInplaceKeyword = 1u << 3,
  // A function or method op whose result may share storage with an input (a view, a split, or
  // the input itself in some cases: contiguous, to, detach, dropout), or is no new tensor at all
  // (int(t), float(t)). The Python emitter writes inplace=True on a module only over a new tensor
  // (Note [In-place modules] in lib/emitters/python/module_tree.cpp).
  kMayAliasInput = 1u << 4,
  // A list or dict op whose result holds objects of its first input (an item, a copy or a slice
  // of a list; a dict's keys, values, items, d.get(k), d.copy()): it aliases input 0
  // (lib/exec/alias.cpp).
  kSharesInputItems = 1u << 5,
  // A function row whose inputs are not in ATen order (F.interpolate: Note [Op table rows]):
  // find_op_by_aten does not return it, and the Python emitter takes its keyword defaults from
  // its Python signature instead of an ATen schema.
  kInputsNotAtenOrder = 1u << 6,
  // A function row whose Python function takes its first input, a list of tensors, as separate
  // arguments (torch.broadcast_tensors(*tensors), torch.meshgrid(*tensors, indexing=)): the Python
  // emitter writes the list's items (or *list).
  kVarargs = 1u << 7,
  // A list or dict method that changes its first input in place (l.append(x), l[i] = v, d.pop(k),
  // ...): an effect in program order, and input 0 is written memory (Note [Container mutation]
  // in lib/exec/alias.h).
  kWritesContainer = 1u << 8,
};

// Facts about ATen ops by their name without namespace and overload ("append", "argmax",
// "resize_"), for ops with or without a row: ATen ops reach the passes as aten:: fallbacks too.
enum AtenFact : uint32_t {
  // Changes its inputs or the world although its name has no trailing '_' ("append", "warn").
  kMutatesByName = 1u << 0,
  // Results differ between two runs with the same inputs ("rand", "bernoulli", "empty").
  kRandom = 1u << 1,
  // An in-place op that changes only a tensor's metadata (shape/strides), not its data
  // ("resize_", "unsqueeze_", "t_").
  kMetadataInplace = 1u << 2,
  // Composite op whose schema promises a new tensor but that returns its input in some cases
  // (dropout with train=False, type_as to the same type, einsum of a permutation, ...).
  kReturnsInputSometimes = 1u << 3,
  // Its tensor result is never floating point (argmax, comparisons, nonzero, arange of ints).
  kNonFloatResult = 1u << 4,
  // Returns (values, indices): the second result holds int64 indices (topk, sort, max(dim)).
  kIndicesSecond = 1u << 5,
};

// The attribute a prim.StateGet/prim.StateSet names, "module.name" ("name" on the root module;
// Note [Module state] in lib/exec/alias.h).
std::string state_path(const Node& n);

// Whether row `op` has fact `f` (false for ops without a row).
bool op_has(std::string_view op, OpFact f);
// The same for a node's op (its row resolved once: Node::info()).
bool op_has(const Node& n, OpFact f);
// The module rows functional-to-module can make (functional_aten set), in table order.
const std::vector<const OpInfo*>& functional_module_rows();
// Whether the ATen op `name` ("append", no "aten::", no overload) has fact `f`.
bool aten_has(std::string_view name, AtenFact f);
// The same for a qualified base ("aten::argmax"); false for any other namespace.
bool aten_base_has(std::string_view base, AtenFact f);

// Note [Python signatures]
// The Python signature an op is written with (lib/ir/op_signatures.cpp): for a module op, its
// constructor (torch.nn, from inspect.signature of torch 1.13), whose required leading parameters
// the Python emitter writes positionally and whose defaults it leaves out; for a function row
// whose keyword defaults no ATen schema gives (kInputsNotAtenOrder, TorchScript-only overloads),
// the parameters its py_args name. Defaults are in the emitter's own literal syntax
// ("1e-05", "\"zeros\"", "None"). Signatures are data beside the rows, not rows: ops with a
// signature but no row (nn.Bilinear, nn.Softsign, ...) stay unknown to find_op. Every module row
// has one except those built otherwise (test_op_table lists them).
struct PyParam {
  std::string name;
  std::optional<std::string> def;  // nullopt: required
};
// The signature of `op`; nullptr when it has none.
const std::vector<PyParam>* python_signature(std::string_view op);

// Note [Python enums]
// Where ATen takes an int code for what the Python function takes as a string (a loss's
// reduction: 0 "none", 1 "mean", 2 "sum"; F.grid_sample's mode and padding_mode; torch.cdist's
// compute_mode), the row keeps ATen's int input and the Python emitter writes the string. The
// TorchScript lifter keeps such an op an ATen call unless the input is a constant in range (or
// None where the Python default stands for it).
// The strings of keyword `param` of row `op`, indexed by ATen's code; nullptr when it is no enum.
const std::vector<std::string>* python_enum(std::string_view op, std::string_view param);
// Every signature by op name (for the consistency test).
const std::map<std::string, std::vector<PyParam>, std::less<>>& python_signatures();

// Note [Python call forms]
// Most function rows are written `callee(inputs...)` in ATen schema order. A row whose Python
// function arranges the same arguments differently has a call form instead: torchvision's
// roi_align op takes (input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
// aligned) where torchvision.ops.roi_align(input, boxes, output_size, spatial_scale, ...) takes the
// two sizes as one tuple. Each argument is a text in which {i} stands for input i, written by
// keyword when `keyword` is set and left out when its text equals `def` (a trailing positional one
// too). A callee "Tensor.m" is method m of input 0 (x.to(device, dtype=...)), whose arguments
// then leave input 0 out. A form with first_result_only stands for the op only when the op's
// other results are unused (torchvision.ops.roi_pool drops roi_pool's argmax); the emitter writes
// the op as torch.ops.<ns>.<op>(...) otherwise. The interpreter and the TorchScript emitter use the row's
// ATen name as usual.
struct PyCallArg {
  const char* keyword;  // "" for a positional argument
  const char* text;     // "{0}", "({3}, {4})"
  const char* def;      // the text of the Python default, or "" when there is none
};
struct PyCallForm {
  const char* callee;
  std::vector<PyCallArg> args;
  bool first_result_only = false;
  // (result, input) pairs: the form stands for the op only where each such result is unused or
  // its input is the constant True (torch.unique(..., return_inverse=True) for aten::_unique2,
  // whose inverse is empty when its flag is False); torch.ops.<ns>.<op>(...) otherwise.
  std::vector<std::pair<int, int>> results_if_true{};
};
// The call form of row `op`; nullptr when it is written the usual way.
const PyCallForm* python_call_form(std::string_view op);

// Lookup by IR op name; nullptr when unknown.
const OpInfo* find_op(std::string_view name);
// Lookup by qualified ATen overload name ("aten::add.Tensor" or "aten::relu" for the default
// overload); nullptr when unknown. In-place variants ("aten::relu_") map to their functional op.
const OpInfo* find_op_by_aten(std::string_view aten_overload);
const std::vector<OpInfo>& all_ops();
namespace detail {
// The rows of lib/ir/op_table_aten.cpp (Note [Spelled ATen ops]), appended by the table itself.
void add_aten_rows(std::vector<OpInfo>& t);
}  // namespace detail

// Whether torch.Tensor has the in-place method `name` ("clamp_", "masked_fill_", "copy_"): an
// in-place ATen op kept as such (Note [In-place writes]) is written as that method call.
bool is_tensor_inplace_method(std::string_view name);
// The method name of an ATen op that is such an in-place method ("aten::clamp_.default" ->
// "clamp_"); empty otherwise.
std::string_view tensor_inplace_method_of(std::string_view aten_op);
// The torch.nn.functional function an ATen in-place op is called through when torch.Tensor has no
// such method: "aten::leaky_relu_.default" -> "leaky_relu_" (F.leaky_relu_(x, 0.2): that op with
// the same arguments); "aten::silu_.default" -> "silu" (F.silu(x, inplace=True), which calls
// exactly that op: F has no silu_); empty otherwise.
std::string_view functional_inplace_of(std::string_view aten_op);
// True for ops of the form "aten::..." that the table does not know (emitted via torch.ops).
bool is_aten_fallback(std::string_view op);
// ATen fallback ops the Python emitter still writes idiomatically (x[i, :, j] for aten::index,
// x.fill_(v)): no "no Python spelling" warning for them.
bool python_spells_fallback(std::string_view op);
// Whether NAME.py writes `op` as a torch.ops.aten call: an ATen op without a row that the Python
// emitter does not spell either (is_aten_fallback and not python_spells_fallback). The report's
// aten_fallbacks, inspect and the DOT picture list these.
bool written_as_torch_ops(std::string_view op);

// The ATen base a spelling without a row stands for: "Tensor.foo", "torch.foo" and "F.foo" ->
// "aten::foo"; "" for other spellings.
std::string spelled_aten_base(std::string_view op);

// The Python operator an `operator.*` op is written as by the emitters ("operator.add" -> "+",
// "operator.is_not" -> "is not"; unary: "operator.neg" -> "-", "operator.not_" -> "not");
// nullptr for other ops.
const char* python_binary_operator(std::string_view op);
const char* python_unary_operator(std::string_view op);
// The infix operator the Python emitter writes a tensor op as when the call means the same
// (tensor on the left; no alpha, no rounding mode): comparisons ("torch.gt" -> ">") and
// arithmetic ("torch.add" -> "+"); nullptr for other ops.
const char* python_tensor_comparison(std::string_view op);
const char* python_tensor_arithmetic(std::string_view op);
// Ops the emitters write as an attribute read of their one input, not a call: Tensor.dtype,
// Tensor.device, Tensor.is_nested, Tensor.is_cuda, Tensor.requires_grad, Device.type, and the
// transposes Tensor.T, Tensor.mT, Tensor.H, Tensor.mH.
bool is_attribute_op(std::string_view op);
// The inside of a Python slice from its bounds' texts ("" for None): "a:b", "a:b:c" (a step of
// "1" is left out), as the emitters write list.slice.
std::string python_slice(const std::string& start, const std::string& end, const std::string& step);

}  // namespace tt
