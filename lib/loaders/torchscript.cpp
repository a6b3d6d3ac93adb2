// TorchScript loader: lifts the forward method of a (traced) TorchScript module into the IR.
//
// Note [Lifting TorchScript]
// torch::jit::load gives a Module whose methods are un-inlined JIT graphs: `self` is the first
// input, submodules are reached with prim::GetAttr chains and called with prim::CallMethod
// (forward, or forward1, forward2, ... when the tracer saw a module called several times).
// The lifter walks the top module's forward graph with a Frame per method being lifted; a Frame
// maps each JIT value either to an IR value or to a module reference (path + jit::Module).
// - prim::GetAttr of a submodule gives a module reference; of a parameter/buffer gives a
//   prim.GetAttr node with a weight ref; of anything else gives a constant.
// - prim::CallMethod on a submodule whose type is a known torch.nn leaf AND whose method graph
//   matches that leaf's recipe (Note [Leaf recipes]) becomes one module op node; any other call
//   is inlined: the callee's graph is lifted in a new Frame whose nodes get scope = callee path.
// - ATen ops go through the op table (find_op_by_aten); a few ATen forms are normalised first
//   (Note [ATen normalisations]); unknown ATen ops keep their qualified name with a warning.
// - Scripted models: see Note [Scripted method graphs] and Note [Lifting control flow].
//
// Note [Scripted method graphs]
// A method of a torch.jit.script'ed module still calls TorchScript functions (F.relu, ...), reads
// configuration attributes (self.stride, self.training, self.use_res_connect) and branches on
// them. Before lifting such a method, the lifter works on a copy of its graph (cached per module
// instance, since attribute values differ between instances of one type): non-tensor attributes
// of self become constants, prim::CallFunction calls are inlined, and the JIT's constant
// propagation resolves what became constant (config branches, `x is None` on constants); the
// result is what this instance actually computes. A method of a known torch.nn leaf type is
// additionally fully inlined (its calls on self, e.g. Conv2d._conv_forward), input guards
// (`if input.dim() != 4: raise ...`, which the nn module performs itself when called) are
// dropped, constant-trip loops are unrolled and list mutation removed, so the leaf recipes see the
// same single key op a traced leaf has. Scripted nn.LSTM / nn.GRU / nn.MultiheadAttention calls
// are lifted from the module's attributes instead (Note [Scripted RNN and attention modules]).
// Traced graphs have none of these constructs and are lifted as they are.
//
// Note [Lifting control flow]
// prim::If and prim::Loop become prim.If / prim.Loop in the IR in TorchScript's own form
// (IR_CONVENTIONS.md; /work/helper_notes/CONTROL_FLOW_IR.md): an If has the condition as input and
// two argument-less blocks returning its outputs; a Loop has (max_trip_count, initial_condition,
// carried...) as inputs and one block with arguments (iteration, carried...) returning
// (continue_condition, carried...). An If whose condition is a constant in the IR is resolved
// here: only the taken branch is lifted (a "branch-resolved" note). Scalar TorchScript builtins
// become Python spellings: operator.add/lt/getitem/is_/is_not/not_/..., len, int/float/bool; with
// constant inputs they are evaluated while lifting. prim::RaiseException becomes
// prim.RaiseException(msg) (an effect), prim::Uninitialized prim.Uninitialized, and
// prim::unchecked_cast disappears (the IR is not typed strictly enough to need it).
//
// Note [Lists mutated in a block]
// The IR is functional, TorchScript lists are mutable. `l.append(x)` / `l.extend(m)` becomes
// `l2 = l + [x]` / `l + m` (operator.add) and later reads of l use l2. A list appended to inside
// a prim.If branch or prim.Loop body but made outside it becomes an extra If result / Loop
// carried value, so the rebinding survives the block. This is faithful only when nothing else
// refers to the same list object: the list must be made in this method (ListConstruct, list(),
// copy(), +, slicing) and never stored in a list/tuple, passed to a call, cast or returned from
// a block (list_alias_problem); otherwise the append exits 4. list(l) / l.copy() are `list(l)`.
// F.interpolate's own TorchScript body appends to a list; its calls are lifted as the
// F.interpolate op instead of being inlined (lift_interpolate).
//
// Note [Leaf recipes]
// A recipe looks at the method graph of a call on a module of a known torch.nn type and returns
// the constructor keywords, or rejects. It accepts only when the graph consists of exactly the
// ATen ops nn.X.forward produces (besides constants, ListConstructs and GetAttrs of the module's
// own tensors), the data input feeds the key op, the key op's result is returned, the
// hyperparameters are constants, and the module's direct parameters/buffers are exactly the ones
// the constructor would create with those keywords. So a subclass with its own forward, or an
// instance that was modified after construction, is inlined rather than mislabelled.
//
// Note [ATen normalisations]
// Where one Python spelling stands for ATen ops with different argument layouts, the lifter
// rewrites to the layout of the op table row (exactly, never changing the result):
//   aten::_convolution{,_mode}     -> F.conv{N}d / F.conv_transpose{N}d (conv{N}d schema order)
//   aten::constant_pad_nd, reflection_pad*, replication_pad* -> F.pad (aten::pad order)
//   aten::upsample_*.vec           -> F.interpolate(input, size, scale_factor, mode, align_corners)
//   aten::arange, arange.start     -> torch.arange (arange.start_step order)
//   aten::to.device/dtype_layout   -> Tensor.to (to.dtype order) when the device is the CPU
//   aten::Int/ScalarImplicit(prim::NumToTensor(x)) -> x
//   aten::slice(x, dim, 0, INT64_MAX, 1) -> x (the tracer's record of a `:` in x[:, i])
#include "loaders/loader.h"

#include "exec/alias.h"
#include "exec/dispatch.h"
#include "exec/interpreter.h"
#include "ir/op_table.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <caffe2/serialize/inline_container.h>
#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/loop_unrolling.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tt {
namespace {

namespace jit = torch::jit;
using c10::IValue;

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
  return l;
}

std::string join_path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// "file.py:123" for a node, from the source range of the Python code that generated it.
std::string node_loc(const jit::Node* n) {
  try {
    jit::SourceRange sr = n->sourceRange();
    if (auto orig = sr.findSourceRangeThatGenerated()) sr = *orig;
    auto flc = sr.file_line_col();
    if (!flc) return "";
    const std::string& file = std::get<0>(*flc);
    if (file.empty()) return "";
    auto slash = file.find_last_of('/');
    return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" +
           std::to_string(std::get<1>(*flc));
  } catch (const std::exception&) {
    return "";  // a missing source is not worth failing the load for
  }
}

std::string kind_str(const jit::Node* n) { return n->kind().toQualString(); }

// Kept as a call while preparing scripted graphs, lifted as the F.interpolate op.
const char* const kInterpolate = "torch.nn.functional.interpolate";

// "aten::add.Tensor" / "aten::relu" (default overload: no suffix).
std::string qualified_overload(const c10::FunctionSchema& s) {
  return s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
}

// "torch.nn.modules.conv.Conv2d" from "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d".
std::string plain_name(std::string q) {
  const std::string pre = "__torch__.";
  if (q.rfind(pre, 0) == 0) q = q.substr(pre.size());
  std::string out;
  size_t start = 0;
  while (start <= q.size()) {
    size_t dot = q.find('.', start);
    std::string comp = q.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (comp.rfind("___torch_mangle_", 0) != 0) out += (out.empty() ? "" : ".") + comp;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

std::string plain_type_name(const jit::Module& m) {
  return plain_name(m.type()->name() ? m.type()->name()->qualifiedName() : "");
}

Type convert_type(const c10::TypePtr& t) {
  using TK = c10::TypeKind;
  switch (t->kind()) {
    case TK::TensorType: {
      auto tt = t->expect<c10::TensorType>();
      Type r = Type::tensor(tt->scalarType()
                                ? dtype_from_scalar_type(static_cast<int64_t>(*tt->scalarType()))
                                : DType::Unknown);
      if (auto sizes = tt->sizes().concrete_sizes()) r.shape = *sizes;
      return r;
    }
    case TK::IntType:
      return Type::of(Type::Kind::Int);
    case TK::FloatType:
      return Type::of(Type::Kind::Float);
    case TK::BoolType:
      return Type::of(Type::Kind::Bool);
    case TK::StringType:
      return Type::of(Type::Kind::Str);
    case TK::NoneType:
      return Type::of(Type::Kind::None);
    case TK::DeviceObjType:
      return Type::of(Type::Kind::Device);
    case TK::ListType:
      return Type::list(convert_type(t->expect<c10::ListType>()->getElementType()));
    case TK::TupleType: {
      std::vector<Type> elems;
      for (const auto& e : t->expect<c10::TupleType>()->elements()) elems.push_back(convert_type(e));
      return Type::tuple(std::move(elems));
    }
    case TK::OptionalType:
      return Type::optional(convert_type(t->expect<c10::OptionalType>()->getElementType()));
    case TK::DictType: {
      auto d = t->expect<c10::DictType>();
      return Type::dict(convert_type(d->getKeyType()), convert_type(d->getValueType()));
    }
    default:
      return Type::any();
  }
}

// How an int constant is to be read when it feeds a schema argument.
enum class IntRole { Plain, ScalarType, Layout, MemoryFormat };

IntRole int_role(const c10::Argument& arg) {
  c10::TypePtr t = arg.real_type();
  if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::ScalarTypeType:
      return IntRole::ScalarType;
    case c10::TypeKind::LayoutType:
      return IntRole::Layout;
    case c10::TypeKind::MemoryFormatType:
      return IntRole::MemoryFormat;
    default:
      return IntRole::Plain;
  }
}

std::string shape_str(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "," : "") + std::to_string(t.size(i));
  return s + "]";
}

// ---------------------------------------------------------------------------------------------
// Leaf recipes (Note [Leaf recipes])

// Read-only view of a leaf module's method graph.
class MethodView {
 public:
  explicit MethodView(const jit::Graph& g) : g_(g) {
    for (const jit::Node* n : g.nodes()) {
      if (!n->blocks().empty()) clean_ = false;
      auto k = n->kind();
      if (k == c10::prim::GetAttr) {
        // Only reads of the module's own tensors (or its submodules' tensors, for
        // nn.MultiheadAttention's out_proj) are part of a leaf's forward.
        const jit::Value* owner = n->input(0);
        std::string prefix;
        if (owner != g.inputs().at(0)) {
          auto it = submodules_.find(owner);
          if (it == submodules_.end()) {
            clean_ = false;
            continue;
          }
          prefix = it->second + ".";
        }
        std::string name = prefix + n->s(c10::attr::name);
        auto ct = n->output()->type()->cast<c10::ClassType>();
        if (ct && ct->is_module())
          submodules_[n->output()] = name;
        // Tensor? too: a scripted Conv2d's bias (the recipes check which weights exist)
        else if (n->output()->type()->isSubtypeOf(*c10::OptionalType::ofTensor()))
          tensors_[n->output()] = name;
        else
          clean_ = false;
        continue;
      }
      if (k == c10::prim::Constant || k == c10::prim::ListConstruct) continue;
      // The tuple of results (the tracer packs a module's results into one).
      if (k == c10::prim::TupleConstruct && g.outputs().size() == 1 && n->output() == g.outputs()[0]) continue;
      ops_.push_back(n);
    }
  }
  bool clean() const { return clean_ && g_.outputs().size() == 1; }
  const std::vector<const jit::Node*>& ops() const { return ops_; }
  size_t num_inputs() const { return g_.inputs().size(); }
  bool is_input(const jit::Value* v, size_t i) const {
    return i < g_.inputs().size() && v == g_.inputs()[i];
  }
  const jit::Value* returned() const { return g_.outputs().at(0); }

  std::optional<IValue> constant(const jit::Value* v) const {
    if (v->node()->kind() != c10::prim::Constant) return std::nullopt;
    return jit::toIValue(v);
  }
  std::optional<int64_t> as_int(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isInt()) return c->toInt();
    return std::nullopt;
  }
  std::optional<double> as_double(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isDouble()) return c->toDouble();
    if (c && c->isInt()) return static_cast<double>(c->toInt());
    return std::nullopt;
  }
  std::optional<bool> as_bool(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isBool()) return c->toBool();
    return std::nullopt;
  }
  std::optional<std::string> as_str(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isString()) return c->toStringRef();
    return std::nullopt;
  }
  bool is_none(const jit::Value* v) const {
    auto c = constant(v);
    return c && c->isNone();
  }
  std::optional<std::vector<int64_t>> as_ints(const jit::Value* v) const {
    if (v->node()->kind() == c10::prim::ListConstruct) {
      std::vector<int64_t> out;
      for (const jit::Value* e : v->node()->inputs()) {
        auto i = as_int(e);
        if (!i) return std::nullopt;
        out.push_back(*i);
      }
      return out;
    }
    auto c = constant(v);
    if (c && c->isIntList()) return c->toIntVector();
    return std::nullopt;
  }
  std::optional<std::vector<double>> as_doubles(const jit::Value* v) const {
    if (v->node()->kind() == c10::prim::ListConstruct) {
      std::vector<double> out;
      for (const jit::Value* e : v->node()->inputs()) {
        auto d = as_double(e);
        if (!d) return std::nullopt;
        out.push_back(*d);
      }
      return out;
    }
    auto c = constant(v);
    if (c && c->isDoubleList()) return c->toDoubleVector();
    return std::nullopt;
  }
  // The attribute path when v is `self.<name>` (or `self.<sub>.<name>`).
  std::optional<std::string> attr_name(const jit::Value* v) const {
    auto it = tensors_.find(v);
    if (it == tensors_.end()) return std::nullopt;
    return it->second;
  }
  // Index of the method input v is, if any.
  std::optional<size_t> input_index(const jit::Value* v) const {
    for (size_t i = 1; i < g_.inputs().size(); ++i)
      if (g_.inputs()[i] == v) return i;
    return std::nullopt;
  }

 private:
  const jit::Graph& g_;
  std::vector<const jit::Node*> ops_;
  std::unordered_map<const jit::Value*, std::string> submodules_, tensors_;
  bool clean_ = true;
};

struct LeafMatch {
  std::string op;
  Attrs attrs;
  std::set<std::string> weights;  // the direct parameters/buffers the constructor creates
  // Python-level structure of the call (the tracer flattens tuples at module boundaries).
  // The module call's arguments: empty = the method's inputs as they are; otherwise built from
  // `call_args` entries (>= 1: method input index; 0: the constant in `call_consts`, in order).
  std::vector<size_t> call_args;
  std::vector<IValue> call_consts;
  size_t hidden_inputs = 0;  // RNNs: 1 = (x, h0), 2 = LSTM (x, (h0, c0))
  // Python result structure. The tracer flattens tuples at module boundaries and drops unused
  // results: the traced method returns `flat_returned` (indexes into the flattened results), as a
  // tuple or as a single value.
  enum class Result { Single, Pair, OutAndPair } result = Result::Single;  // x / (a, b) / (a, (b, c))
  std::vector<size_t> flat_returned;
  bool returns_tuple = false;
};

struct LeafCtx {
  const MethodView& g;
  const jit::Module& module;
  std::string why;  // reason for a rejection (for the "leaf-inlined" note)

  // A tensor attribute of the module, or of a submodule by dotted path ("self_attn.in_proj_weight").
  at::Tensor tensor(const std::string& name) const {
    jit::Module m = module;
    std::string rest = name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      std::string head = rest.substr(0, dot);
      if (!m.hasattr(head) || !m.attr(head).isModule()) return {};
      m = m.attr(head).toModule();
      rest = rest.substr(dot + 1);
    }
    if (!m.hasattr(rest)) return {};
    IValue v = m.attr(rest);
    return v.isTensor() ? v.toTensor() : at::Tensor();
  }
};

using Recipe = std::function<std::optional<LeafMatch>(LeafCtx&)>;

// Which of the key node's outputs the method returns (see LeafMatch::flat_returned).
bool match_flat_results(LeafCtx& ctx, const jit::Node* key, LeafMatch& m);

std::optional<LeafMatch> reject(LeafCtx& ctx, std::string why) {
  ctx.why = std::move(why);
  return std::nullopt;
}

// Argument reader for the key node of a recipe: collects the first failure.
class Args {
 public:
  Args(LeafCtx& ctx, const jit::Node* n) : g_(ctx.g), n_(n) {}
  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }
  const jit::Value* in(size_t i) const { return n_->input(i); }

  int64_t i(size_t k) { return get(g_.as_int(in(k)), k, "an int constant"); }
  double f(size_t k) { return get(g_.as_double(in(k)), k, "a float constant"); }
  bool b(size_t k) { return get(g_.as_bool(in(k)), k, "a bool constant"); }
  std::string s(size_t k) { return get(g_.as_str(in(k)), k, "a str constant"); }
  std::vector<int64_t> ints(size_t k, size_t len) {
    auto v = get(g_.as_ints(in(k)), k, "a constant int list");
    if (ok() && v.size() != len) fail(k, "a list of " + std::to_string(len) + " ints");
    return v;
  }
  bool none(size_t k) const { return g_.is_none(in(k)); }
  // `self.<name>` (true) or None (false); anything else fails.
  bool attr_or_none(size_t k, const std::string& name) {
    if (none(k)) return false;
    auto a = g_.attr_name(in(k));
    if (!a || *a != name) fail(k, "self." + name + " or None");
    return true;
  }
  void attr(size_t k, const std::string& name) {
    auto a = g_.attr_name(in(k));
    if (!a || *a != name) fail(k, "self." + name);
  }
  void data(size_t k, size_t input_index = 1) {
    if (!g_.is_input(in(k), input_index)) fail(k, "the module's input");
  }
  void fail(size_t k, const std::string& expected) {
    if (why_.empty())
      why_ = "argument " + std::to_string(k) + " of " + kind_str(n_) + " is not " + expected;
  }

 private:
  template <typename T>
  T get(std::optional<T> v, size_t k, const char* what) {
    if (!v) {
      fail(k, what);
      return T{};
    }
    return *v;
  }
  const MethodView& g_;
  const jit::Node* n_;
  std::string why_;
};

// The single op of the method (besides constants/lists/attribute reads), of one of `kinds`,
// reading the module input and returning its result.
const jit::Node* single_op(LeafCtx& ctx, std::initializer_list<const char*> kinds) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1) {
    ctx.why = "forward has " + std::to_string(ops.size()) + " ops, expected 1";
    return nullptr;
  }
  const jit::Node* n = ops[0];
  std::string k = kind_str(n);
  if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) {
    ctx.why = "forward calls " + k;
    return nullptr;
  }
  if (ctx.g.num_inputs() != 2 || n->inputs().empty() || !ctx.g.is_input(n->input(0), 1) ||
      ctx.g.returned() != n->output(0)) {
    ctx.why = "forward does not map its input straight through " + k;
    return nullptr;
  }
  return n;
}

bool is_inplace(const jit::Node* n) {
  std::string k = kind_str(n);
  return k.back() == '_';
}

std::vector<int64_t> tail_sizes(const at::Tensor& t, int64_t from) {
  std::vector<int64_t> out;
  for (int64_t d = from; d < t.dim(); ++d) out.push_back(t.size(d));
  return out;
}

Recipe conv_recipe(int64_t dims, bool transposed) {
  return [dims, transposed](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string cls = std::string(transposed ? "nn.ConvTranspose" : "nn.Conv") + std::to_string(dims) + "d";
    const auto& ops = ctx.g.ops();
    const jit::Node* pad = nullptr;
    const jit::Node* conv = nullptr;
    if (ops.size() == 1) {
      conv = ops[0];
    } else if (ops.size() == 2 && kind_str(ops[0]) == "aten::pad") {
      pad = ops[0];
      conv = ops[1];
    } else {
      return reject(ctx, "forward is not a single convolution");
    }
    std::string k = kind_str(conv);
    // Scripted modules call the public ops: conv{N}d(input, weight, bias, stride, padding,
    // dilation, groups) / conv_transpose{N}d(input, weight, bias, stride, padding,
    // output_padding, groups, dilation).
    std::string nd = std::to_string(dims) + "d";
    bool pub = k == (transposed ? "aten::conv_transpose" : "aten::conv") + nd;
    bool mode = k == "aten::_convolution_mode" ||
                (pub && !transposed && conv->inputs().size() > 4 && ctx.g.as_str(conv->input(4)));
    if (k != "aten::_convolution" && !pub && !(mode && !transposed && !pad))
      return reject(ctx, "forward calls " + k);
    if (ctx.g.num_inputs() != 2 || ctx.g.returned() != conv->output())
      return reject(ctx, "forward does not return the convolution");
    Args a(ctx, conv);
    if (pad) {
      if (!ctx.g.is_input(pad->input(0), 1) || conv->input(0) != pad->output())
        return reject(ctx, "padding does not feed the convolution");
    } else {
      a.data(0);
    }
    a.attr(1, "weight");
    bool bias = a.attr_or_none(2, "bias");
    std::vector<int64_t> stride = a.ints(3, dims);
    std::vector<int64_t> dilation = pub && transposed ? std::vector<int64_t>{} : a.ints(5, dims);
    std::vector<int64_t> padding, output_padding;
    std::string padding_str;
    int64_t groups = 1;
    if (mode) {
      padding_str = a.s(4);
      groups = a.i(6);
    } else if (pub && !transposed) {
      padding = a.ints(4, dims);
      groups = a.i(6);
    } else if (pub) {
      padding = a.ints(4, dims);
      output_padding = a.ints(5, dims);
      groups = a.i(6);
      dilation = a.ints(7, dims);
    } else {
      padding = a.ints(4, dims);
      if (a.ok() && a.b(6) != transposed) return reject(ctx, "transposed flag does not match the type");
      output_padding = a.ints(7, dims);
      groups = a.i(8);
    }
    if (!a.ok()) return reject(ctx, a.why());
    if (!transposed && std::any_of(output_padding.begin(), output_padding.end(), [](int64_t x) { return x != 0; }))
      return reject(ctx, "non-zero output_padding on a forward convolution");
    at::Tensor w = ctx.tensor("weight");
    if (!w.defined() || w.dim() != dims + 2 || groups < 1) return reject(ctx, "unexpected weight shape");
    std::string padding_mode = "zeros";
    if (pad) {
      Args p(ctx, pad);
      std::vector<int64_t> amounts = p.ints(1, static_cast<size_t>(2 * dims));
      padding_mode = p.s(2);
      if (!p.ok()) return reject(ctx, p.why());
      if (!p.none(3)) return reject(ctx, "padding with a value");
      if (padding_mode != "reflect" && padding_mode != "replicate" && padding_mode != "circular")
        return reject(ctx, "padding mode " + padding_mode);
      if (std::any_of(padding.begin(), padding.end(), [](int64_t x) { return x != 0; }))
        return reject(ctx, "explicit padding plus convolution padding");
      // F.pad lists the last dim first: (w_left, w_right, h_top, h_bottom, ...).
      padding.assign(static_cast<size_t>(dims), 0);
      for (int64_t d = 0; d < dims; ++d) {
        size_t at = static_cast<size_t>(2 * (dims - 1 - d));
        if (amounts[at] != amounts[at + 1]) return reject(ctx, "asymmetric padding");
        padding[static_cast<size_t>(d)] = amounts[at];
      }
      if (transposed) return reject(ctx, "padding_mode on a transposed convolution");
    }
    LeafMatch m;
    m.op = cls;
    int64_t in_ch = transposed ? w.size(0) : w.size(1) * groups;
    int64_t out_ch = transposed ? w.size(1) * groups : w.size(0);
    m.attrs.set("in_channels", in_ch);
    m.attrs.set("out_channels", out_ch);
    m.attrs.set("kernel_size", tail_sizes(w, 2));
    m.attrs.set("stride", stride);
    if (mode)
      m.attrs.set("padding", padding_str);
    else
      m.attrs.set("padding", padding);
    if (transposed) {
      m.attrs.set("output_padding", output_padding);
      m.attrs.set("groups", groups);
      m.attrs.set("bias", bias);
      m.attrs.set("dilation", dilation);
    } else {
      m.attrs.set("dilation", dilation);
      m.attrs.set("groups", groups);
      m.attrs.set("bias", bias);
    }
    m.attrs.set("padding_mode", padding_mode);
    m.weights = {"weight"};
    if (bias) m.weights.insert("bias");
    return m;
  };
}

std::optional<LeafMatch> linear_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::linear"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  a.attr(1, "weight");
  bool bias = a.attr_or_none(2, "bias");
  if (!a.ok()) return reject(ctx, a.why());
  at::Tensor w = ctx.tensor("weight");
  if (!w.defined() || w.dim() != 2) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.Linear";
  m.attrs.set("in_features", w.size(1));
  m.attrs.set("out_features", w.size(0));
  m.attrs.set("bias", bias);
  m.weights = {"weight"};
  if (bias) m.weights.insert("bias");
  return m;
}

// BatchNorm{N}d and InstanceNorm{N}d share the argument layout
// (input, weight, bias, running_mean, running_var, training/use_input_stats, momentum, eps, cudnn).
Recipe norm_recipe(std::string cls, const char* aten) {
  return [cls, aten](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {aten});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    bool w = a.attr_or_none(1, "weight");
    bool b = a.attr_or_none(2, "bias");
    bool rm = a.attr_or_none(3, "running_mean");
    bool rv = a.attr_or_none(4, "running_var");
    double momentum = a.f(6);
    double eps = a.f(7);
    if (!a.ok()) return reject(ctx, a.why());
    if (w != b || rm != rv) return reject(ctx, "only some of the affine/running-stat tensors are used");
    at::Tensor t = w ? ctx.tensor("weight") : rm ? ctx.tensor("running_mean") : at::Tensor();
    if (!t.defined() || t.dim() != 1)
      return reject(ctx, "num_features cannot be recovered (no affine weight and no running stats)");
    LeafMatch m;
    m.op = cls;
    m.attrs.set("num_features", t.size(0));
    m.attrs.set("eps", eps);
    m.attrs.set("momentum", momentum);
    m.attrs.set("affine", w);
    m.attrs.set("track_running_stats", rm);
    if (w) m.weights.insert({"weight", "bias"});
    if (rm) m.weights.insert({"running_mean", "running_var", "num_batches_tracked"});
    return m;
  };
}

std::optional<LeafMatch> layer_norm_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::layer_norm"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  auto shape = ctx.g.as_ints(n->input(1));
  bool w = a.attr_or_none(2, "weight");
  bool b = a.attr_or_none(3, "bias");
  double eps = a.f(4);
  if (!a.ok()) return reject(ctx, a.why());
  if (!shape) return reject(ctx, "normalized_shape is not constant");
  if (w != b) return reject(ctx, "only one of weight/bias is used");
  LeafMatch m;
  m.op = "nn.LayerNorm";
  m.attrs.set("normalized_shape", *shape);
  m.attrs.set("eps", eps);
  m.attrs.set("elementwise_affine", w);
  if (w) m.weights = {"weight", "bias"};
  return m;
}

// nn.RMSNorm (torch >= 2.4): aten::rms_norm(input, normalized_shape, weight?, eps?).
std::optional<LeafMatch> rms_norm_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::rms_norm"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  auto shape = ctx.g.as_ints(n->input(1));
  bool w = a.attr_or_none(2, "weight");
  std::optional<double> eps;
  if (!a.none(3)) eps = a.f(3);
  if (!a.ok()) return reject(ctx, a.why());
  if (!shape) return reject(ctx, "normalized_shape is not constant");
  LeafMatch m;
  m.op = "nn.RMSNorm";
  m.attrs.set("normalized_shape", *shape);
  if (eps) {
    m.attrs.set("eps", *eps);
  } else {
    m.attrs.set("eps", NoneAttr{});
  }
  m.attrs.set("elementwise_affine", w);
  if (w) m.weights = {"weight"};
  return m;
}

std::optional<LeafMatch> group_norm_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::group_norm"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  int64_t groups = a.i(1);
  bool w = a.attr_or_none(2, "weight");
  bool b = a.attr_or_none(3, "bias");
  double eps = a.f(4);
  if (!a.ok()) return reject(ctx, a.why());
  if (!w || !b) return reject(ctx, "num_channels cannot be recovered without the affine weight");
  at::Tensor t = ctx.tensor("weight");
  if (!t.defined() || t.dim() != 1) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.GroupNorm";
  m.attrs.set("num_groups", groups);
  m.attrs.set("num_channels", t.size(0));
  m.attrs.set("eps", eps);
  m.attrs.set("affine", true);
  m.weights = {"weight", "bias"};
  return m;
}

std::optional<LeafMatch> embedding_recipe(LeafCtx& ctx) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1 || kind_str(ops[0]) != "aten::embedding")
    return reject(ctx, "forward is not a single aten::embedding");
  const jit::Node* n = ops[0];
  if (ctx.g.num_inputs() != 2 || ctx.g.returned() != n->output())
    return reject(ctx, "forward does not return the lookup");
  Args a(ctx, n);
  a.attr(0, "weight");
  a.data(1);
  int64_t padding_idx = a.i(2);
  bool scale_grad = a.b(3);
  bool sparse = a.b(4);
  if (!a.ok()) return reject(ctx, a.why());
  at::Tensor w = ctx.tensor("weight");
  if (!w.defined() || w.dim() != 2) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.Embedding";
  m.attrs.set("num_embeddings", w.size(0));
  m.attrs.set("embedding_dim", w.size(1));
  // nn.Embedding turns a negative padding_idx into a non-negative one; -1 means None in ATen.
  if (padding_idx < 0)
    m.attrs.set("padding_idx", NoneAttr{});
  else
    m.attrs.set("padding_idx", padding_idx);
  m.attrs.set("scale_grad_by_freq", scale_grad);
  m.attrs.set("sparse", sparse);
  m.weights = {"weight"};
  return m;
}

// Activations of one input: `aten` (and `aten_` when the module has an inplace flag).
Recipe unary_recipe(std::string cls, std::string aten, bool has_inplace) {
  return [cls, aten, has_inplace](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string inplace_kind = aten + "_";
    const jit::Node* n = has_inplace ? single_op(ctx, {aten.c_str(), inplace_kind.c_str()})
                                     : single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    if (n->inputs().size() != 1) return reject(ctx, "unexpected arguments to " + aten);
    LeafMatch m;
    m.op = cls;
    if (has_inplace) m.attrs.set("inplace", is_inplace(n));
    return m;
  };
}

Recipe hardtanh_recipe(bool relu6) {
  return [relu6](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {"aten::hardtanh", "aten::hardtanh_"});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    double lo = a.f(1), hi = a.f(2);
    if (!a.ok()) return reject(ctx, a.why());
    LeafMatch m;
    if (relu6) {
      if (lo != 0.0 || hi != 6.0) return reject(ctx, "bounds are not 0..6");
      m.op = "nn.ReLU6";
    } else {
      m.op = "nn.Hardtanh";
      m.attrs.set("min_val", lo);
      m.attrs.set("max_val", hi);
    }
    m.attrs.set("inplace", is_inplace(n));
    return m;
  };
}

std::optional<LeafMatch> leaky_relu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::leaky_relu", "aten::leaky_relu_"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  double slope = a.f(1);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.LeakyReLU";
  m.attrs.set("negative_slope", slope);
  m.attrs.set("inplace", is_inplace(n));
  return m;
}

std::optional<LeafMatch> prelu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::prelu"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  a.attr(1, "weight");
  if (!a.ok()) return reject(ctx, a.why());
  at::Tensor w = ctx.tensor("weight");
  if (!w.defined() || w.dim() != 1) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.PReLU";
  m.attrs.set("num_parameters", w.size(0));
  m.weights = {"weight"};
  return m;
}

std::optional<LeafMatch> elu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::elu", "aten::elu_"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  double alpha = a.f(1), scale = a.f(2), input_scale = a.f(3);
  if (!a.ok()) return reject(ctx, a.why());
  if (scale != 1.0 || input_scale != 1.0) return reject(ctx, "scaled ELU");
  LeafMatch m;
  m.op = "nn.ELU";
  m.attrs.set("alpha", alpha);
  m.attrs.set("inplace", is_inplace(n));
  return m;
}

std::optional<LeafMatch> gelu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::gelu"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  std::string approximate = a.s(1);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.GELU";
  m.attrs.set("approximate", approximate);
  return m;
}

Recipe softmax_recipe(std::string cls, const char* aten) {
  return [cls, aten](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {aten});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    int64_t dim = a.i(1);
    if (!a.ok()) return reject(ctx, a.why());
    if (!a.none(2)) return reject(ctx, "softmax with a dtype");
    LeafMatch m;
    m.op = cls;
    m.attrs.set("dim", dim);
    return m;
  };
}

Recipe max_pool_recipe(int64_t dims) {
  return [dims](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string aten = "aten::max_pool" + std::to_string(dims) + "d";
    const jit::Node* n = single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    size_t d = static_cast<size_t>(dims);
    std::vector<int64_t> kernel = a.ints(1, d);
    auto stride = ctx.g.as_ints(n->input(2));
    std::vector<int64_t> padding = a.ints(3, d), dilation = a.ints(4, d);
    bool ceil_mode = a.b(5);
    if (!a.ok()) return reject(ctx, a.why());
    if (!stride || (!stride->empty() && stride->size() != d)) return reject(ctx, "stride is not constant");
    LeafMatch m;
    m.op = "nn.MaxPool" + std::to_string(dims) + "d";
    m.attrs.set("kernel_size", kernel);
    m.attrs.set("stride", stride->empty() ? kernel : *stride);
    m.attrs.set("padding", padding);
    m.attrs.set("dilation", dilation);
    m.attrs.set("return_indices", false);
    m.attrs.set("ceil_mode", ceil_mode);
    return m;
  };
}

Recipe avg_pool_recipe(int64_t dims) {
  return [dims](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string aten = "aten::avg_pool" + std::to_string(dims) + "d";
    const jit::Node* n = single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    size_t d = static_cast<size_t>(dims);
    std::vector<int64_t> kernel = a.ints(1, d);
    auto stride = ctx.g.as_ints(n->input(2));
    std::vector<int64_t> padding = a.ints(3, d);
    bool ceil_mode = a.b(4), count_include_pad = a.b(5);
    if (!a.ok()) return reject(ctx, a.why());
    if (!stride || (!stride->empty() && stride->size() != d)) return reject(ctx, "stride is not constant");
    LeafMatch m;
    m.op = "nn.AvgPool" + std::to_string(dims) + "d";
    m.attrs.set("kernel_size", kernel);
    m.attrs.set("stride", stride->empty() ? kernel : *stride);
    m.attrs.set("padding", padding);
    m.attrs.set("ceil_mode", ceil_mode);
    m.attrs.set("count_include_pad", count_include_pad);
    if (dims > 1) {  // AvgPool1d has no divisor_override
      if (a.none(6)) {
        m.attrs.set("divisor_override", NoneAttr{});
      } else {
        int64_t div = a.i(6);
        if (!a.ok()) return reject(ctx, a.why());
        m.attrs.set("divisor_override", div);
      }
    }
    return m;
  };
}

Recipe adaptive_pool_recipe(int64_t dims, bool max) {
  return [dims, max](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string kind = max ? "Max" : "Avg";
    std::string aten = std::string("aten::adaptive_") + (max ? "max" : "avg") + "_pool" + std::to_string(dims) + "d";
    const jit::Node* n = single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    std::vector<int64_t> size = a.ints(1, static_cast<size_t>(dims));
    if (!a.ok()) return reject(ctx, a.why());
    LeafMatch m;
    m.op = "nn.Adaptive" + kind + "Pool" + std::to_string(dims) + "d";
    m.attrs.set("output_size", size);
    if (max) m.attrs.set("return_indices", false);
    return m;
  };
}

std::optional<LeafMatch> flatten_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::flatten"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  int64_t start = a.i(1), end = a.i(2);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.Flatten";
  m.attrs.set("start_dim", start);
  m.attrs.set("end_dim", end);
  return m;
}

std::optional<LeafMatch> dropout_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::dropout", "aten::dropout_"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  double p = a.f(1);
  a.b(2);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.Dropout";
  m.attrs.set("p", p);
  m.attrs.set("inplace", is_inplace(n));
  return m;
}

std::optional<LeafMatch> identity_recipe(LeafCtx& ctx) {
  if (!ctx.g.ops().empty() || ctx.g.num_inputs() != 2 || !ctx.g.is_input(ctx.g.returned(), 1))
    return reject(ctx, "forward is not the identity");
  LeafMatch m;
  m.op = "nn.Identity";
  return m;
}

std::optional<LeafMatch> upsample_recipe(LeafCtx& ctx) {
  static const std::map<std::string, std::pair<const char*, bool>> modes = {
      // ATen op -> (mode, has align_corners argument)
      {"aten::upsample_nearest1d", {"nearest", false}},
      {"aten::upsample_nearest2d", {"nearest", false}},
      {"aten::upsample_nearest3d", {"nearest", false}},
      {"aten::_upsample_nearest_exact1d", {"nearest-exact", false}},
      {"aten::_upsample_nearest_exact2d", {"nearest-exact", false}},
      {"aten::_upsample_nearest_exact3d", {"nearest-exact", false}},
      {"aten::upsample_linear1d", {"linear", true}},
      {"aten::upsample_bilinear2d", {"bilinear", true}},
      {"aten::upsample_bicubic2d", {"bicubic", true}},
      {"aten::upsample_trilinear3d", {"trilinear", true}},
  };
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1) return reject(ctx, "forward is not a single upsample op");
  auto it = modes.find(kind_str(ops[0]));
  if (it == modes.end()) return reject(ctx, "forward calls " + kind_str(ops[0]));
  const jit::Node* n = single_op(ctx, {it->first.c_str()});
  if (!n) return std::nullopt;
  const c10::FunctionSchema* s = n->maybeSchema();
  if (!s || (s->overload_name() != "vec" && !s->overload_name().empty()))
    return reject(ctx, "not the .vec or default overload");
  Args a(ctx, n);
  bool has_align = it->second.second;
  size_t scale_at = has_align ? 3 : 2;
  LeafMatch m;
  m.op = "nn.Upsample";
  if (s->overload_name().empty()) {
    // torch 2.x traces nn.Upsample(size=...) to the default overload: (input, output_size,
    // [align_corners,] scales...). With every scale None it computes what size= does.
    for (size_t i = scale_at; i < n->inputs().size(); ++i)
      if (!a.none(i)) return reject(ctx, "explicit scales next to an output size");
    auto size = ctx.g.as_ints(n->input(1));
    if (!size) return reject(ctx, "size is not constant");
    m.attrs.set("size", *size);
    m.attrs.set("scale_factor", NoneAttr{});
  } else if (a.none(1)) {
    m.attrs.set("size", NoneAttr{});
  } else {
    auto size = ctx.g.as_ints(n->input(1));
    if (!size) return reject(ctx, "size is not constant");
    m.attrs.set("size", *size);
  }
  if (s->overload_name().empty()) {
    // scale_factor set above
  } else if (a.none(scale_at)) {
    m.attrs.set("scale_factor", NoneAttr{});
  } else {
    auto scale = ctx.g.as_doubles(n->input(scale_at));
    if (!scale) return reject(ctx, "scale_factor is not constant");
    m.attrs.set("scale_factor", *scale);
  }
  m.attrs.set("mode", std::string(it->second.first));
  if (has_align) {
    bool align = a.b(2);
    if (!a.ok()) return reject(ctx, a.why());
    m.attrs.set("align_corners", align);
  } else {
    m.attrs.set("align_corners", NoneAttr{});
  }
  return m;
}

std::optional<LeafMatch> pixel_shuffle_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::pixel_shuffle"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  int64_t r = a.i(1);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.PixelShuffle";
  m.attrs.set("upscale_factor", r);
  return m;
}

Recipe pad2d_recipe(bool zero) {
  return [zero](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {"aten::pad", "aten::constant_pad_nd"});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    std::vector<int64_t> padding = a.ints(1, 4);
    double value = 0.0;
    if (kind_str(n) == "aten::pad") {
      if (a.s(2) != "constant" && a.ok()) return reject(ctx, "not constant padding");
      if (!a.none(3)) value = a.f(3);
    } else {
      value = a.f(2);
    }
    if (!a.ok()) return reject(ctx, a.why());
    LeafMatch m;
    m.op = zero ? "nn.ZeroPad2d" : "nn.ConstantPad2d";
    m.attrs.set("padding", padding);
    if (zero) {
      if (value != 0.0) return reject(ctx, "non-zero padding value");
    } else {
      m.attrs.set("value", value);
    }
    return m;
  };
}

// nn.LSTM / nn.GRU's parameters in their flat weight order (_flat_weights_names).
std::vector<std::string> rnn_weight_names(int64_t num_layers, bool bidirectional, bool bias, bool proj) {
  std::vector<std::string> out;
  for (int64_t l = 0; l < num_layers; ++l) {
    for (int dir = 0; dir < (bidirectional ? 2 : 1); ++dir) {
      std::string sfx = "_l" + std::to_string(l) + (dir ? "_reverse" : "");
      out.push_back("weight_ih" + sfx);
      out.push_back("weight_hh" + sfx);
      if (bias) {
        out.push_back("bias_ih" + sfx);
        out.push_back("bias_hh" + sfx);
      }
      if (proj) out.push_back("weight_hr" + sfx);
    }
  }
  return out;
}

// nn.LSTM / nn.GRU: aten::lstm.input(input, hx[], params[], has_biases, num_layers, dropout,
// train, bidirectional, batch_first) and aten::gru.input(input, hx, params[], ...). Without an
// explicit hidden state, forward builds zeros from the batch size (size/NumToTensor/Int/zeros).
Recipe rnn_recipe(bool lstm) {
  return [lstm](LeafCtx& ctx) -> std::optional<LeafMatch> {
    static const std::set<std::string> aux = {"aten::size", "prim::NumToTensor", "aten::Int",
                                              "aten::zeros", "prim::TupleConstruct"};
    std::string key = lstm ? "aten::lstm" : "aten::gru";
    const jit::Node* n = nullptr;
    for (const jit::Node* op : ctx.g.ops()) {
      std::string k = kind_str(op);
      if (k == key && !n) {
        n = op;
      } else if (!aux.count(k)) {
        return reject(ctx, "forward calls " + k);
      }
    }
    if (!n) return reject(ctx, "forward does not call " + key);
    const c10::FunctionSchema* s = n->maybeSchema();
    if (!s || s->overload_name() != "input") return reject(ctx, "packed sequences are not lifted");
    Args a(ctx, n);
    a.data(0);
    bool has_biases = a.b(3);
    int64_t num_layers = a.i(4);
    double dropout = a.f(5);
    bool bidirectional = a.b(7);
    bool batch_first = a.b(8);
    if (!a.ok()) return reject(ctx, a.why());

    // Hidden state: built inside (zeros) or passed in (flattened by the tracer).
    size_t hidden_inputs = ctx.g.num_inputs() - 2;
    const jit::Value* hx = n->input(1);
    std::vector<const jit::Value*> hx_parts;
    if (lstm) {
      if (hx->node()->kind() != c10::prim::ListConstruct || hx->node()->inputs().size() != 2)
        return reject(ctx, "unexpected hidden state");
      for (const jit::Value* v : hx->node()->inputs()) hx_parts.push_back(v);
    } else {
      hx_parts.push_back(hx);
    }
    if (hidden_inputs == 0) {
      for (const jit::Value* v : hx_parts)
        if (kind_str(v->node()) != "aten::zeros") return reject(ctx, "unexpected hidden state");
    } else if (hidden_inputs == hx_parts.size()) {
      for (size_t i = 0; i < hx_parts.size(); ++i)
        if (!ctx.g.is_input(hx_parts[i], 2 + i)) return reject(ctx, "unexpected hidden state");
    } else {
      return reject(ctx, "unexpected inputs");
    }

    // Parameters: exactly nn.LSTM/nn.GRU's flat weight order.
    at::Tensor w_ih = ctx.tensor("weight_ih_l0");
    if (!w_ih.defined() || w_ih.dim() != 2) return reject(ctx, "no weight_ih_l0");
    bool proj = lstm && ctx.tensor("weight_hr_l0").defined();
    std::vector<std::string> expected = rnn_weight_names(num_layers, bidirectional, has_biases, proj);
    const jit::Node* params = n->input(2)->node();
    if (params->kind() != c10::prim::ListConstruct || params->inputs().size() != expected.size())
      return reject(ctx, "unexpected parameter list");
    for (size_t i = 0; i < expected.size(); ++i) {
      auto name = ctx.g.attr_name(params->input(i));
      if (!name || *name != expected[i]) return reject(ctx, "unexpected parameter list");
    }

    LeafMatch m;
    if (!match_flat_results(ctx, n, m)) return std::nullopt;

    int64_t gates = lstm ? 4 : 3;
    m.op = lstm ? "nn.LSTM" : "nn.GRU";
    m.attrs.set("input_size", w_ih.size(1));
    m.attrs.set("hidden_size", w_ih.size(0) / gates);
    m.attrs.set("num_layers", num_layers);
    m.attrs.set("bias", has_biases);
    m.attrs.set("batch_first", batch_first);
    m.attrs.set("dropout", dropout);
    m.attrs.set("bidirectional", bidirectional);
    if (lstm) m.attrs.set("proj_size", proj ? ctx.tensor("weight_hr_l0").size(0) : int64_t{0});
    m.weights.insert(expected.begin(), expected.end());
    m.hidden_inputs = hidden_inputs;
    m.result = lstm ? LeafMatch::Result::OutAndPair : LeafMatch::Result::Pair;
    return m;
  };
}

bool match_flat_results(LeafCtx& ctx, const jit::Node* key, LeafMatch& m) {
  auto flat_index = [&](const jit::Value* v) -> std::optional<size_t> {
    for (size_t i = 0; i < key->outputs().size(); ++i)
      if (key->output(i) == v) return i;
    return std::nullopt;
  };
  const jit::Value* rv = ctx.g.returned();
  m.returns_tuple = rv->node()->kind() == c10::prim::TupleConstruct;
  std::vector<const jit::Value*> parts;
  if (m.returns_tuple)
    parts.assign(rv->node()->inputs().begin(), rv->node()->inputs().end());
  else
    parts.push_back(rv);
  for (const jit::Value* v : parts) {
    auto i = flat_index(v);
    if (!i) {
      ctx.why = "forward returns something else than " + kind_str(key) + "'s results";
      return false;
    }
    m.flat_returned.push_back(*i);
  }
  return true;
}

// nn.MultiheadAttention when its fast path ran (eval, batch_first, packed in_proj):
// aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
// proj_weight, proj_bias, mask, need_weights, average_attn_weights, mask_type). The slow path
// is inlined instead. `dropout` only acts in training and is not in the graph: it becomes 0.0.
std::optional<LeafMatch> mha_recipe(LeafCtx& ctx) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1 || kind_str(ops[0]) != "aten::_native_multi_head_attention")
    return reject(ctx, "forward does not use the fused attention kernel (only that form is lifted)");
  const jit::Node* n = ops[0];
  Args a(ctx, n);
  int64_t embed_dim = a.i(3), num_heads = a.i(4);
  a.attr(5, "in_proj_weight");
  a.attr(6, "in_proj_bias");
  a.attr(7, "out_proj.weight");
  a.attr(8, "out_proj.bias");
  bool need_weights = a.b(10);
  bool average = a.b(11);
  if (!a.ok()) return reject(ctx, a.why());
  if (!a.none(9) || !a.none(12)) return reject(ctx, "attention with a mask");
  LeafMatch m;
  for (size_t i = 0; i < 3; ++i) {
    auto idx = ctx.g.input_index(n->input(i));
    if (!idx) return reject(ctx, "query/key/value are not the module's inputs");
    m.call_args.push_back(*idx);
  }
  if (!match_flat_results(ctx, n, m)) return std::nullopt;
  at::Tensor w = ctx.tensor("in_proj_weight");
  if (!w.defined() || w.dim() != 2 || w.size(0) != 3 * embed_dim || w.size(1) != embed_dim)
    return reject(ctx, "in_proj_weight does not match embed_dim");
  // forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
  //         average_attn_weights=True)
  if (!need_weights || !average) {
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue());
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue(need_weights));
  }
  if (!average) {
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue());
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue(average));
  }
  m.op = "nn.MultiheadAttention";
  m.attrs.set("embed_dim", embed_dim);
  m.attrs.set("num_heads", num_heads);
  m.attrs.set("dropout", 0.0);
  m.attrs.set("bias", true);
  m.attrs.set("add_bias_kv", false);
  m.attrs.set("add_zero_attn", false);
  m.attrs.set("kdim", embed_dim);
  m.attrs.set("vdim", embed_dim);
  m.attrs.set("batch_first", true);
  m.weights = {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
  m.result = LeafMatch::Result::Pair;  // (attn_output, attn_weights or None)
  return m;
}

// nn.TransformerEncoderLayer when its fast path ran (eval under no_grad; the fast path needs
// batch_first=True, no mask, relu or gelu): aten::_transformer_encoder_layer_fwd(src, embed_dim,
// num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps,
// norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,
// ffn_bias_2, mask, mask_type). The slow path is inlined instead. Dropout only acts in training
// and is not in the graph: it becomes 0.0.
std::optional<LeafMatch> transformer_encoder_layer_recipe(LeafCtx& ctx) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1 || kind_str(ops[0]) != "aten::_transformer_encoder_layer_fwd")
    return reject(ctx, "forward does not use the fused encoder kernel (only that form is lifted)");
  const jit::Node* n = ops[0];
  Args a(ctx, n);
  int64_t d_model = a.i(1), nhead = a.i(2);
  static const char* const weights[] = {
      "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
      "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
      "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"};
  for (size_t i = 0; i < 4; ++i) a.attr(3 + i, weights[i]);
  bool gelu = a.b(7), norm_first = a.b(8);
  double eps = a.f(9);
  for (size_t i = 4; i < 12; ++i) a.attr(6 + i, weights[i]);
  if (!a.ok()) return reject(ctx, a.why());
  for (size_t i = 18; i < n->inputs().size(); ++i)
    if (!a.none(i)) return reject(ctx, "encoder layer with a mask");
  auto idx = ctx.g.input_index(n->input(0));
  if (!idx || *idx != 1) return reject(ctx, "src is not the module's first input");
  LeafMatch m;
  m.call_args.push_back(*idx);
  if (!match_flat_results(ctx, n, m)) return std::nullopt;
  at::Tensor w_in = ctx.tensor("self_attn.in_proj_weight"), w1 = ctx.tensor("linear1.weight");
  if (!w_in.defined() || w_in.dim() != 2 || w_in.size(0) != 3 * d_model || w_in.size(1) != d_model)
    return reject(ctx, "in_proj_weight does not match d_model");
  if (!w1.defined() || w1.dim() != 2 || w1.size(1) != d_model) return reject(ctx, "linear1 does not match d_model");
  m.op = "nn.TransformerEncoderLayer";
  m.attrs.set("d_model", d_model);
  m.attrs.set("nhead", nhead);
  m.attrs.set("dim_feedforward", w1.size(0));
  m.attrs.set("dropout", 0.0);
  m.attrs.set("activation", std::string(gelu ? "gelu" : "relu"));
  m.attrs.set("layer_norm_eps", eps);
  m.attrs.set("batch_first", true);
  m.attrs.set("norm_first", norm_first);
  m.attrs.set("bias", true);
  m.weights = std::set<std::string>(std::begin(weights), std::end(weights));
  return m;
}

// A scripted nn.TransformerEncoderLayer read from its attributes (its forward, with the fast-path
// checks and their messages, is not lifted): what the fused kernel of
// transformer_encoder_layer_recipe computes, for relu/gelu, packed q/k/v projections with biases
// and no dropout at work. nullopt, with `why`, for any other configuration.
std::optional<LeafMatch> scripted_encoder_layer(const jit::Module& mod, std::string& why) {
  auto sub = [](const jit::Module& m, const char* name) -> std::optional<jit::Module> {
    if (!m.hasattr(name)) return std::nullopt;
    IValue v = m.attr(name);
    if (!v.isObject()) return std::nullopt;
    return jit::Module(v.toObject());
  };
  auto get = [](const jit::Module& m, const char* name) { return m.hasattr(name) ? m.attr(name) : IValue(); };
  auto as_double = [](const IValue& v) -> std::optional<double> {
    if (v.isDouble()) return v.toDouble();
    if (v.isInt()) return static_cast<double>(v.toInt());
    return std::nullopt;
  };
  auto attn = sub(mod, "self_attn"), lin1 = sub(mod, "linear1"), norm1 = sub(mod, "norm1"), norm2 = sub(mod, "norm2");
  IValue act = get(mod, "activation_relu_or_gelu"), norm_first = get(mod, "norm_first");
  if (!attn || !lin1 || !norm1 || !norm2 || !act.isInt() || !norm_first.isBool()) {
    why = "its attributes are not those of the torch.nn class";
    return std::nullopt;
  }
  if (act.toInt() != 1 && act.toInt() != 2) {
    why = "an activation other than relu/gelu";
    return std::nullopt;
  }
  IValue d_model = get(*attn, "embed_dim"), nhead = get(*attn, "num_heads"), batch_first = get(*attn, "batch_first");
  IValue same = get(*attn, "_qkv_same_embed_dim");
  if (!d_model.isInt() || !nhead.isInt() || !batch_first.isBool() || !same.isBool() || !same.toBool() ||
      !get(*attn, "bias_k").isNone() || !get(*attn, "in_proj_bias").isTensor()) {
    why = "its self_attn is not a packed nn.MultiheadAttention with biases";
    return std::nullopt;
  }
  auto eps1 = as_double(get(*norm1, "eps")), eps2 = as_double(get(*norm2, "eps"));
  if (!eps1 || !eps2 || *eps1 != *eps2) {
    why = "norm1 and norm2 have different eps";
    return std::nullopt;
  }
  std::optional<double> p;
  for (const char* d : {"dropout", "dropout1", "dropout2"}) {
    auto dm = sub(mod, d);
    auto dp = dm ? as_double(get(*dm, "p")) : std::nullopt;
    if (!dp || (p && *p != *dp)) {
      why = "its dropout modules differ";
      return std::nullopt;
    }
    p = dp;
  }
  if (mod.is_training() && *p > 0) {
    why = "dropout at work (training mode)";
    return std::nullopt;
  }
  IValue w1 = get(*lin1, "weight");
  if (!w1.isTensor() || w1.toTensor().dim() != 2 || w1.toTensor().size(1) != d_model.toInt()) {
    why = "linear1 does not match d_model";
    return std::nullopt;
  }
  LeafMatch m;
  m.op = "nn.TransformerEncoderLayer";
  m.attrs.set("d_model", d_model.toInt());
  m.attrs.set("nhead", nhead.toInt());
  m.attrs.set("dim_feedforward", w1.toTensor().size(0));
  m.attrs.set("dropout", *p);
  m.attrs.set("activation", std::string(act.toInt() == 2 ? "gelu" : "relu"));
  m.attrs.set("layer_norm_eps", *eps1);
  m.attrs.set("batch_first", batch_first.toBool());
  m.attrs.set("norm_first", norm_first.toBool());
  m.attrs.set("bias", true);
  m.weights = {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
               "self_attn.out_proj.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
               "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"};
  return m;
}

// Keyed by the module's class name without "__torch__." and mangling.
const std::map<std::string, Recipe>& recipes() {
  static const std::map<std::string, Recipe> r = [] {
    std::map<std::string, Recipe> m;
    const std::string mods = "torch.nn.modules.";
    for (int64_t d = 1; d <= 3; ++d) {
      std::string nd = std::to_string(d) + "d";
      m[mods + "conv.Conv" + nd] = conv_recipe(d, false);
      m[mods + "conv.ConvTranspose" + nd] = conv_recipe(d, true);
      m[mods + "batchnorm.BatchNorm" + nd] = norm_recipe("nn.BatchNorm" + nd, "aten::batch_norm");
      m[mods + "instancenorm.InstanceNorm" + nd] = norm_recipe("nn.InstanceNorm" + nd, "aten::instance_norm");
      m[mods + "pooling.MaxPool" + nd] = max_pool_recipe(d);
      m[mods + "pooling.AvgPool" + nd] = avg_pool_recipe(d);
      m[mods + "pooling.AdaptiveAvgPool" + nd] = adaptive_pool_recipe(d, false);
      m[mods + "pooling.AdaptiveMaxPool" + nd] = adaptive_pool_recipe(d, true);
    }
    m[mods + "linear.Linear"] = linear_recipe;
    m[mods + "linear.Identity"] = identity_recipe;
    m[mods + "normalization.LayerNorm"] = layer_norm_recipe;
    m[mods + "normalization.GroupNorm"] = group_norm_recipe;
    m[mods + "normalization.RMSNorm"] = rms_norm_recipe;
    m[mods + "sparse.Embedding"] = embedding_recipe;
    m[mods + "activation.ReLU"] = unary_recipe("nn.ReLU", "aten::relu", true);
    m[mods + "activation.SiLU"] = unary_recipe("nn.SiLU", "aten::silu", true);
    m[mods + "activation.Hardswish"] = unary_recipe("nn.Hardswish", "aten::hardswish", true);
    m[mods + "activation.Hardsigmoid"] = unary_recipe("nn.Hardsigmoid", "aten::hardsigmoid", true);
    m[mods + "activation.Sigmoid"] = unary_recipe("nn.Sigmoid", "aten::sigmoid", false);
    m[mods + "activation.Tanh"] = unary_recipe("nn.Tanh", "aten::tanh", false);
    m[mods + "activation.ReLU6"] = hardtanh_recipe(true);
    m[mods + "activation.Hardtanh"] = hardtanh_recipe(false);
    m[mods + "activation.LeakyReLU"] = leaky_relu_recipe;
    m[mods + "activation.PReLU"] = prelu_recipe;
    m[mods + "activation.ELU"] = elu_recipe;
    m[mods + "activation.GELU"] = gelu_recipe;
    m[mods + "activation.Softmax"] = softmax_recipe("nn.Softmax", "aten::softmax");
    m[mods + "activation.LogSoftmax"] = softmax_recipe("nn.LogSoftmax", "aten::log_softmax");
    m[mods + "flatten.Flatten"] = flatten_recipe;
    m[mods + "dropout.Dropout"] = dropout_recipe;
    m[mods + "upsampling.Upsample"] = upsample_recipe;
    m[mods + "pixelshuffle.PixelShuffle"] = pixel_shuffle_recipe;
    m[mods + "padding.ZeroPad2d"] = pad2d_recipe(true);
    m[mods + "padding.ConstantPad2d"] = pad2d_recipe(false);
    m[mods + "rnn.LSTM"] = rnn_recipe(true);
    m[mods + "rnn.GRU"] = rnn_recipe(false);
    m[mods + "activation.MultiheadAttention"] = mha_recipe;
    m[mods + "transformer.TransformerEncoderLayer"] = transformer_encoder_layer_recipe;
    return m;
  }();
  return r;
}

// ---------------------------------------------------------------------------------------------
// The lifter

struct ModuleRef {
  jit::Module module;
  std::string path;  // "" for the top module
};

// What a JIT value stands for while lifting one method.
struct Binding {
  Value* value = nullptr;
  std::optional<ModuleRef> module;
};

struct Frame {
  ModuleRef self;
  std::string scope;
  std::unordered_map<const jit::Value*, Binding> env;
  // The frame and node that called this method or function (nullptr at the top), and how graph
  // input i maps to the call's input i + arg_offset; for Note [In-place writes while lifting].
  const Frame* caller = nullptr;
  const jit::Node* call = nullptr;
  size_t arg_offset = 0;
};

class Lifter {
 public:
  Lifter(jit::Module root, Diagnostics& diags, std::vector<std::pair<std::string, std::string>>* source_values)
      : root_(std::move(root)), diags_(diags), source_values_(source_values) {}

  std::unique_ptr<Graph> run() {
    graph_ = std::make_unique<Graph>();
    collect_weights(root_, "");
    auto method = root_.find_method("forward");
    if (!method)
      throw Error(ExitCode::Unsupported,
                  "the TorchScript module has no forward method — export a module whose forward "
                  "computes the model");
    std::shared_ptr<jit::Graph> g = prepared(method->graph(), root_, false);
    Frame f;
    f.self = {root_, ""};
    f.env[g->inputs().at(0)] = Binding{nullptr, f.self};
    for (size_t i = 1; i < g->inputs().size(); ++i) {
      const jit::Value* in = g->inputs()[i];
      f.env[in] = Binding{graph_->add_input(convert_type(in->type()), name_hint(in)), {}};
    }
    lift_block(*g->block(), f);
    for (const jit::Value* out : g->outputs()) graph_->add_output(value_of(f, out, nullptr));
    // A prepared copy of a scripted forward renumbers the values without a name of their own:
    // only named ones are the archive's.
    bool own_graph = g == method->graph();
    std::vector<std::pair<std::string, std::string>> sources;  // before the sweep frees values
    for (const jit::Node* n : g->block()->nodes())
      for (const jit::Value* o : n->outputs()) {
        auto it = f.env.find(o);
        if (it != f.env.end() && it->second.value && o->type()->cast<c10::TensorType>() &&
            (own_graph || o->hasDebugName()))
          sources.emplace_back(it->second.value->name(), o->debugName());
      }
    sweep_dead_prims();
    if (source_values_)
      for (auto& s : sources)
        if (graph_->find_value(s.first)) source_values_->push_back(std::move(s));
    return std::move(graph_);
  }

 private:
  // ---- weights ----

  // State_dict order: each module's parameters, then its buffers, then its children.
  void collect_weights(const jit::Module& m, const std::string& prefix) {
    for (const auto& p : m.named_parameters(/*recurse=*/false)) add_weight(join_path(prefix, p.name), p.value, true);
    for (const auto& b : m.named_buffers(/*recurse=*/false)) add_weight(join_path(prefix, b.name), b.value, false);
    for (const auto& c : m.named_children()) collect_weights(c.value, join_path(prefix, c.name));
  }
  // A module's parameters/buffers, recursively, by relative name in state_dict order.
  static void collect_names(const jit::Module& m, const std::string& prefix,
                            std::vector<std::pair<std::string, bool>>& out) {
    for (const auto& p : m.named_parameters(false)) out.emplace_back(join_path(prefix, p.name), true);
    for (const auto& b : m.named_buffers(false)) out.emplace_back(join_path(prefix, b.name), false);
    for (const auto& c : m.named_children()) collect_names(c.value, join_path(prefix, c.name), out);
  }
  void add_weight(const std::string& name, const at::Tensor& t, bool is_param) {
    // Detached and contiguous; the storage is shared with the module but reference-counted, so it
    // outlives the jit::Module.
    graph_->weights().set(name, Weight{t.detach().contiguous(), is_param});
    state_dict_names_.insert(name);
  }

  // ---- values ----

  static std::string name_hint(const jit::Value* v) {
    return v->hasDebugName() ? sanitize_name(v->debugName()) : "";
  }

  Value* value_of(Frame& f, const jit::Value* v, const jit::Node* user, IntRole role = IntRole::Plain) {
    auto it = f.env.find(v);
    if (it == f.env.end())
      throw Error(ExitCode::Internal, "value %" + v->debugName() + " used before it is defined");
    if (!it->second.value)
      unsupported(user, "a module object is used as a value", f,
                  "only calls of submodules and reads of their tensors are supported");
    Value* val = it->second.value;
    if (role == IntRole::Plain) return val;
    return typed_int(val, role, f, user);
  }

  // An int constant re-typed as ScalarType/Layout/MemoryFormat for the argument it feeds.
  Value* typed_int(Value* val, IntRole role, Frame& f, const jit::Node* user) {
    const AttrValue* c = val->constant();
    if (!c || !std::holds_alternative<int64_t>(*c) || val->type().kind != Type::Kind::Int) return val;
    // Per block: a constant made inside one branch is not visible in the other.
    auto key = std::make_tuple(val, static_cast<int>(role), cur_);
    auto it = typed_consts_.find(key);
    if (it != typed_consts_.end()) return it->second;
    int64_t i = std::get<int64_t>(*c);
    Value* out = nullptr;
    switch (role) {
      case IntRole::ScalarType:
        out = add_constant(dtype_from_scalar_type(i), Type::of(Type::Kind::ScalarType), f, user);
        break;
      case IntRole::Layout:
        out = add_constant(i, Type::of(Type::Kind::Layout), f, user);
        break;
      case IntRole::MemoryFormat:
        out = add_constant(i, Type::of(Type::Kind::MemoryFormat), f, user);
        break;
      case IntRole::Plain:
        return val;
    }
    typed_consts_[key] = out;
    return out;
  }

  Node* append(const std::string& op, const std::vector<Value*>& ins, Frame& f, const jit::Node* src) {
    Node* n = graph_->create(op, ins, 0);
    n->set_scope(f.scope);
    if (src) n->set_loc(node_loc(src));
    (cur_ ? cur_ : graph_->block())->append(n);
    return n;
  }

  // A node for `src` whose outputs are bound to src's outputs.
  Node* emit(const std::string& op, const std::vector<Value*>& ins, const jit::Node* src, Frame& f) {
    Node* n = append(op, ins, f, src);
    for (const jit::Value* o : src->outputs())
      f.env[o] = Binding{n->add_output(convert_type(o->type()), name_hint(o)), {}};
    return n;
  }

  Value* add_constant(AttrValue v, Type t, Frame& f, const jit::Node* src) {
    Node* n = append("prim.Constant", {}, f, src);
    n->attrs().set("value", std::move(v));
    return n->add_output(std::move(t));
  }

  // ---- constants ----

  Value* constant_value(const IValue& iv, const c10::TypePtr& type, Frame& f, const jit::Node* src) {
    if (iv.isNone()) return add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, src);
    if (iv.isBool()) return add_constant(iv.toBool(), Type::of(Type::Kind::Bool), f, src);
    if (iv.isInt()) return add_constant(iv.toInt(), Type::of(Type::Kind::Int), f, src);
    if (iv.isDouble()) return add_constant(iv.toDouble(), Type::of(Type::Kind::Float), f, src);
    if (iv.isString()) return add_constant(iv.toStringRef(), Type::of(Type::Kind::Str), f, src);
    if (iv.isDevice()) return add_constant(DeviceAttr{iv.toDevice().str()}, Type::of(Type::Kind::Device), f, src);
    if (iv.isIntList()) return add_constant(iv.toIntVector(), Type::list(Type::of(Type::Kind::Int)), f, src);
    if (iv.isDoubleList())
      return add_constant(iv.toDoubleVector(), Type::list(Type::of(Type::Kind::Float)), f, src);
    if (iv.isBoolList()) {
      std::vector<int64_t> bits;
      for (bool b : iv.toBoolList()) bits.push_back(b ? 1 : 0);
      return add_constant(bits, Type::list(Type::of(Type::Kind::Bool)), f, src);
    }
    if (iv.isTensor()) return tensor_constant(iv.toTensor(), f, src, "a tensor constant");
    if (iv.isList()) {
      auto list = iv.toListRef();
      if (std::all_of(list.begin(), list.end(), [](const IValue& e) { return e.isString(); })) {
        std::vector<std::string> strs;
        for (const IValue& e : list) strs.push_back(e.toStringRef());
        return add_constant(strs, Type::list(Type::of(Type::Kind::Str)), f, src);
      }
    }
    if (iv.isTuple()) {
      std::vector<Value*> elems;
      auto tt = type ? type->cast<c10::TupleType>() : nullptr;
      const auto& items = iv.toTupleRef().elements();
      for (size_t i = 0; i < items.size(); ++i)
        elems.push_back(constant_value(items[i], tt && i < tt->elements().size() ? tt->elements()[i] : nullptr, f, src));
      Node* n = append("prim.TupleConstruct", elems, f, src);
      std::vector<Type> types;
      for (Value* e : elems) types.push_back(e->type());
      return n->add_output(Type::tuple(types));
    }
    unsupported(src, "a constant of type " + (type ? type->repr_str() : iv.tagKind()), f,
                "only None, bool, int, float, str, device, lists, tuples and tensors are supported");
  }

  // Small tensors are inline constants; large ones become buffers (Note in IR_CONVENTIONS.md).
  Value* tensor_constant(const at::Tensor& raw, Frame& f, const jit::Node* src, const std::string& what) {
    at::Tensor t = raw.detach();
    Type type = Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())), t.sizes().vec());
    if (t.numel() <= 16) return add_constant(t.clone().contiguous(), type, f, src);
    const void* key = t.unsafeGetTensorImpl();
    std::string name;
    auto it = constant_buffers_.find(key);
    if (it != constant_buffers_.end()) {
      name = it->second;
    } else {
      name = graph_->weights().unique_name("_constants.c" + std::to_string(constant_buffers_.size()));
      graph_->weights().set(name, Weight{t.clone().contiguous(), false});
      constant_buffers_[key] = name;
      diags_.warn("tensor-constant",
                  what + " of shape " + shape_str(t) + " became the buffer '" + name +
                      "': the original model's state_dict has no such key, so load its checkpoints "
                      "with strict=False",
                  "", f.scope, src ? node_loc(src) : "");
    }
    Node* n = append("prim.GetAttr", {}, f, src);
    n->set_weight("value", name);
    return n->add_output(type);
  }

  // ---- nodes ----

  [[noreturn]] void unsupported(const jit::Node* n, const std::string& what, const Frame& f,
                                const std::string& fix) const {
    std::string where;
    if (n) {
      std::string loc = node_loc(n);
      // Some nodes (prim::DictConstruct, ...) carry no source range: take their first user's.
      for (size_t i = 0; loc.empty() && i < n->outputs().size(); ++i)
        for (const jit::Use& u : n->outputs()[i]->uses())
          if (loc.empty()) loc = node_loc(u.user);
      if (!loc.empty()) where += " at " + loc;
    }
    if (!f.scope.empty()) where += " in module '" + f.scope + "'";
    std::string op = n ? kind_str(n) + ": " : "";
    throw Error(ExitCode::Unsupported, op + what + where + " — " + fix);
  }

  void lift_block(const jit::Block& b, Frame& f) {
    for (const jit::Node* n : b.nodes()) lift_node(n, f);
  }

  // Lifts the JIT block `jb` into the IR block `b` (a branch or a loop body) and sets its outputs.
  void lift_into(Block* b, const jit::Block& jb, Frame& f, const jit::Node* owner) {
    Block* saved = cur_;
    cur_ = b;
    lift_block(jb, f);
    for (const jit::Value* out : jb.outputs()) b->add_output(value_of(f, out, owner));
    cur_ = saved;
  }

  const Binding& binding_of(Frame& f, const jit::Value* v) {
    auto it = f.env.find(v);
    if (it == f.env.end())
      throw Error(ExitCode::Internal, "value %" + v->debugName() + " used before it is defined");
    return it->second;
  }

  // ---- control flow (Note [Lifting control flow]) ----

  void lift_if(const jit::Node* n, Frame& f) {
    Value* cond = value_of(f, n->input(0), n);
    const AttrValue* c = cond->constant();
    if (c && std::holds_alternative<bool>(*c)) {
      bool taken = std::get<bool>(*c);
      const jit::Block* b = n->blocks().at(taken ? 0 : 1);
      lift_block(*b, f);
      for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = binding_of(f, b->outputs()[i]);
      std::string loc = node_loc(n);
      if (resolved_notes_.insert(f.scope + "@" + loc).second)
        diags_.add({Severity::Note, "branch-resolved",
                    std::string("the condition of this `if` is the constant ") + (taken ? "True" : "False") +
                        " (a module attribute or TorchScript constant): only the " +
                        (taken ? "`if`" : "`else`") + " branch was kept",
                    "", f.scope, loc});
      return;
    }
    Node* node = append("prim.If", {cond}, f, n);
    for (const jit::Value* o : n->outputs()) node->add_output(convert_type(o->type()), name_hint(o));
    // Lists appended to inside a branch are extra results (Note [Lists mutated in a block]).
    std::vector<const jit::Value*> lists = lists_mutated_inside(n);
    std::vector<Binding> before;
    for (const jit::Value* l : lists) before.push_back(binding_of(f, l));
    for (size_t i = 0; i < 2; ++i) {
      Block* b = node->add_block();
      lift_into(b, *n->blocks().at(i), f, n);
      for (size_t j = 0; j < lists.size(); ++j) {
        b->add_output(value_of(f, lists[j], n));
        f.env[lists[j]] = before[j];
      }
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = Binding{node->output(i), {}};
    for (const jit::Value* l : lists)
      f.env[l] = Binding{node->add_output(convert_type(l->type()), name_hint(l)), {}};
  }

  void lift_loop(const jit::Node* n, Frame& f) {
    std::vector<Value*> ins = inputs_of(n, f);
    // Lists appended to in the body are carried values (Note [Lists mutated in a block]).
    std::vector<const jit::Value*> lists = lists_mutated_inside(n);
    for (const jit::Value* l : lists) ins.push_back(value_of(f, l, n));
    Node* node = append("prim.Loop", ins, f, n);
    for (const jit::Value* o : n->outputs()) node->add_output(convert_type(o->type()), name_hint(o));
    const jit::Block& body = *n->blocks().at(0);
    Block* b = node->add_block();
    for (const jit::Value* in : body.inputs())
      f.env[in] = Binding{b->add_input(convert_type(in->type()), name_hint(in)), {}};
    for (const jit::Value* l : lists) f.env[l] = Binding{b->add_input(convert_type(l->type()), name_hint(l)), {}};
    lift_into(b, body, f, n);
    for (const jit::Value* l : lists) b->add_output(value_of(f, l, n));
    for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = Binding{node->output(i), {}};
    for (const jit::Value* l : lists)
      f.env[l] = Binding{node->add_output(convert_type(l->type()), name_hint(l)), {}};
  }

  // ---- list mutation (Note [Lists mutated in a block]) ----

  static bool is_list_mutation(const jit::Node* n) {
    if (n->inputs().empty() || !n->input(0)->type()->cast<c10::ListType>()) return false;
    std::string k = kind_str(n);
    return k == "aten::append" || k == "aten::extend" || k == "aten::_set_item";
  }

  // True when v is defined inside one of owner's blocks (at any depth).
  static bool defined_inside(const jit::Value* v, const jit::Node* owner) {
    for (const jit::Node* p = v->node(); p;) {
      const jit::Block* b = p->owningBlock();
      if (!b) return false;
      p = b->owningNode();
      if (p == owner) return true;
    }
    return false;
  }

  // The lists defined outside `owner` that are appended to inside it, in order of first mutation.
  static std::vector<const jit::Value*> lists_mutated_inside(const jit::Node* owner) {
    std::vector<const jit::Value*> out;
    std::function<void(const jit::Block*)> walk = [&](const jit::Block* b) {
      for (const jit::Node* m : b->nodes()) {
        if (is_list_mutation(m) && !defined_inside(m->input(0), owner) &&
            std::find(out.begin(), out.end(), m->input(0)) == out.end())
          out.push_back(m->input(0));
        for (const jit::Block* sub : m->blocks()) walk(sub);
      }
    };
    for (const jit::Block* b : owner->blocks()) walk(b);
    return out;
  }

  // l.append(x) / l.extend(other): l is rebound to the new list l + [x] / l + other.
  void lift_list_mutation(const jit::Node* n, Frame& f) {
    const jit::Value* l = n->input(0);
    std::string why = list_alias_problem(l);
    if (why.empty() && n->outputs().size() == 1 && n->output()->hasUses())
      why = "the result of the mutation is used";
    if (!why.empty())
      unsupported(n, "a list is mutated but " + why, f,
                  "build the list without mutating it (e.g. a list comprehension), or trace the model");
    Value* cur = value_of(f, l, n);
    Type type = convert_type(l->type());
    if (kind_str(n) == "aten::_set_item") return lift_list_set_item(n, cur, type, f);
    Value* tail = value_of(f, n->input(1), n);
    if (kind_str(n) == "aten::append") {
      Node* lc = append("prim.ListConstruct", {tail}, f, n);
      tail = lc->add_output(type);
    }
    Node* add = append("operator.add", {cur, tail}, f, n);
    f.env[l] = Binding{add->add_output(type, name_hint(l)), {}};
  }

  // l[idx] = v (aten::_set_item.t) on a fresh list whose length is known while lifting (built by
  // a ListConstruct, a constant list, or list()/copy() of one; swin's `shift_size[0] = 0` on a
  // copy of an attribute) with a constant idx: l is rebound to the list rebuilt item by item,
  // [l[0], v, l[2]], which is exactly what the assignment leaves. An index out of range raises
  // in Python: refused here. Other lengths or indices: refused (exit 4).
  void lift_list_set_item(const jit::Node* n, Value* cur, const Type& type, Frame& f) {
    std::optional<int64_t> len = known_list_length(cur);
    const AttrValue* idx_c = value_of(f, n->input(1), n)->constant();
    const int64_t* idx = idx_c ? std::get_if<int64_t>(idx_c) : nullptr;
    if (!len || !idx)
      unsupported(n, "a list item is assigned (l[i] = v) on a list whose length or index is not known "
                     "while converting", f, "build the list without mutating it, or trace the model");
    int64_t k = *idx < 0 ? *idx + *len : *idx;
    if (k < 0 || k >= *len)
      unsupported(n, "a list item assignment is out of range (it raises IndexError)", f,
                  "fix the index in the model");
    Value* v = value_of(f, n->input(2), n);
    Type elem = type.elems.empty() ? Type::of(Type::Kind::Any) : type.elems[0];
    std::vector<Value*> items;
    for (int64_t j = 0; j < *len; ++j) {
      if (j == k) {
        items.push_back(v);
        continue;
      }
      Value* jv = add_constant(j, Type::of(Type::Kind::Int), f, n);
      Node* get = append("operator.getitem", {cur, jv}, f, n);
      items.push_back(get->add_output(elem));
    }
    Node* lc = append("prim.ListConstruct", items, f, n);
    f.env[n->input(0)] = Binding{lc->add_output(type, name_hint(n->input(0))), {}};
  }

  // The length of a list value when it is known while lifting: a ListConstruct, a constant list,
  // list(x) of one of those, or an if's result that has the same known length in both branches.
  static std::optional<int64_t> known_list_length(const Value* v) {
    if (const AttrValue* c = v->constant()) {
      if (const auto* a = std::get_if<std::vector<int64_t>>(c)) return static_cast<int64_t>(a->size());
      if (const auto* a = std::get_if<std::vector<double>>(c)) return static_cast<int64_t>(a->size());
      if (const auto* a = std::get_if<std::vector<std::string>>(c)) return static_cast<int64_t>(a->size());
      return std::nullopt;
    }
    const Node* p = v->node();
    if (!p) return std::nullopt;
    if (p->is("prim.ListConstruct")) return static_cast<int64_t>(p->num_inputs());
    if (p->is("list") && p->num_inputs() == 1) return known_list_length(p->input(0));
    if (p->is("prim.If") && p->blocks().size() == 2) {
      std::optional<int64_t> len;
      for (const auto& b : p->blocks()) {
        if (v->offset() >= b->outputs().size()) return std::nullopt;
        auto l = known_list_length(b->outputs()[v->offset()]);
        if (!l || (len && *len != *l)) return std::nullopt;
        len = l;
      }
      return len;
    }
    return std::nullopt;
  }

  // Why rebinding `l` would not be faithful ("" when it is): l must be a fresh list of this
  // method that nothing else can see (no alias in a tuple, another list, a callee, a block result).
  static std::string list_alias_problem(const jit::Value* l) {
    std::string pk = kind_str(l->node());
    static const std::set<std::string> fresh = {"prim::ListConstruct", "aten::list", "aten::copy", "aten::add",
                                                "aten::slice"};
    if (!fresh.count(pk)) return "it is not a new list made in this method (it comes from " + pk + ")";
    for (const jit::Use& u : l->uses()) {
      const jit::Node* user = u.user;
      if (is_list_mutation(user) && u.offset == 0) continue;
      auto k = user->kind();
      if (k == c10::prim::Return) {
        if (user->owningBlock()->owningNode() == nullptr) continue;  // the method's own result
        return "it is also a result of a branch or loop body";
      }
      if (k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct || k == c10::prim::Loop ||
          k == c10::prim::CallMethod || k == c10::prim::CallFunction || k == c10::prim::unchecked_cast ||
          k == c10::prim::SetAttr || k == c10::prim::DictConstruct || is_list_mutation(user))
        return "it is also stored or passed on (" + kind_str(user) + ")";
    }
    return "";
  }

  void lift_raise(const jit::Node* n, Frame& f) {
    // prim::RaiseException(str msg, str? cls): the message only (an f-string's text when it was
    // formatted, see aten::format below).
    Value* msg = value_of(f, n->input(0), n);
    append("prim.RaiseException", {msg}, f, n);
  }

  void lift_node(const jit::Node* n, Frame& f) {
    using namespace c10;
    const auto k = n->kind();
    if (k == prim::Constant) {
      // A function value (of a call kept by the preparation): only prim::CallFunction reads it.
      if (n->output()->type()->cast<c10::FunctionType>()) return;
      auto iv = jit::toIValue(n->output());
      if (!iv) unsupported(n, "a constant without a value", f, "re-export the model");
      f.env[n->output()] = Binding{constant_value(*iv, n->output()->type(), f, n), {}};
      return;
    }
    if (k == prim::GetAttr) return lift_get_attr(n, f);
    if (k == prim::If) return lift_if(n, f);
    if (k == prim::Loop) return lift_loop(n, f);
    if (k == prim::CallFunction) return lift_call_function(n, f);
    if (k == prim::RaiseException) return lift_raise(n, f);
    if (k == prim::Uninitialized) return void(emit("prim.Uninitialized", {}, n, f));
    if (k == prim::unchecked_cast) {
      f.env[n->output()] = binding_of(f, n->input(0));
      return;
    }
    if (k == aten::warn) return;  // a warning has no result
    if (k == aten::format) {
      // An exception message keeps the format string as its text; any other use (nn.MultiheadAttention
      // keeps the reason why its fast path is not taken) formats for real: "...".format(args).
      bool only_raise = std::all_of(n->output()->uses().begin(), n->output()->uses().end(),
                                    [](const jit::Use& u) { return u.user->kind() == prim::RaiseException; });
      if (only_raise) {
        f.env[n->output()] = binding_of(f, n->input(0));
        return;
      }
      emit("str.format", inputs_of(n, f), n, f);
      return;
    }
    if (k == prim::CallMethod) return lift_call(n, f);
    if (is_list_mutation(n)) return lift_list_mutation(n, f);
    if ((k == aten::list || k == aten::copy) && n->inputs().size() == 1 && n->input(0)->type()->cast<c10::ListType>()) {
      // list(l) / l.copy() as list(l): a list even when l is x.size() (a torch.Size in Python).
      return void(emit("list", inputs_of(n, f), n, f));
    }
    if (k == prim::dtype || k == prim::device || kind_str(n) == "prim::is_nested" || k == prim::is_cuda ||
        kind_str(n) == "prim::requires_grad" ||
        (kind_str(n) == "prim::type" && n->inputs().size() == 1 && n->input(0)->type()->kind() == c10::TypeKind::DeviceObjType)) {
      // x.dtype / x.device / x.is_nested (tensor attributes; nn.LSTM and nn.MultiheadAttention read them)
      static const std::map<std::string, std::pair<const char*, Type::Kind>> attrs = {
          {"prim::dtype", {"Tensor.dtype", Type::Kind::ScalarType}},
          {"prim::device", {"Tensor.device", Type::Kind::Device}},
          {"prim::is_nested", {"Tensor.is_nested", Type::Kind::Bool}},
          {"prim::is_cuda", {"Tensor.is_cuda", Type::Kind::Bool}},
          {"prim::requires_grad", {"Tensor.requires_grad", Type::Kind::Bool}},
          {"prim::type", {"Device.type", Type::Kind::Str}}};
      const auto& a = attrs.at(kind_str(n));
      Node* d = append(a.first, {value_of(f, n->input(0), n)}, f, n);
      f.env[n->output()] = Binding{d->add_output(Type::of(a.second), name_hint(n->output())), {}};
      return;
    }
    if (k == prim::ListConstruct) return void(emit("prim.ListConstruct", inputs_of(n, f), n, f));
    if (k == prim::TupleConstruct) return void(emit("prim.TupleConstruct", inputs_of(n, f), n, f));
    // A dict of results (torchvision's segmentation models return {"out": ..., "aux": ...}).
    if (k == prim::DictConstruct) return void(emit("prim.DictConstruct", inputs_of(n, f), n, f));
    if (k == prim::NumToTensor) return void(emit("prim.NumToTensor", inputs_of(n, f), n, f));
    if (k == prim::ListUnpack || k == prim::TupleUnpack) return lift_unpack(n, f);
    if (k == prim::TupleIndex) return lift_tuple_index(n, f);
    if (!n->blocks().empty() || k.is_prim()) {
      unsupported(n, "this TorchScript construct is not supported", f,
                  "rewrite that part of the model, or trace it with torch.jit.trace(model.eval(), example)");
    }
    lift_op(n, f);
  }

  std::vector<Value*> inputs_of(const jit::Node* n, Frame& f) {
    std::vector<Value*> ins;
    for (const jit::Value* v : n->inputs()) ins.push_back(value_of(f, v, n));
    return ins;
  }

  void lift_get_attr(const jit::Node* n, Frame& f) {
    auto it = f.env.find(n->input(0));
    if (it == f.env.end() || !it->second.module)
      unsupported(n, "attribute read on something that is not a module", f,
                  "only module attributes can be read");
    const ModuleRef& owner = *it->second.module;
    std::string name = n->s(c10::attr::name);
    std::string full = join_path(owner.path, name);
    const jit::Value* out = n->output();
    if (auto ct = out->type()->cast<c10::ClassType>()) {
      if (!ct->is_module())
        unsupported(n, "attribute '" + full + "' is a TorchScript object", f,
                    "only tensors, numbers, strings and submodules can be read");
      f.env[out] = Binding{nullptr, ModuleRef{jit::Module(owner.module.attr(name).toObject()), full}};
      return;
    }
    IValue iv = owner.module.attr(name);
    if (iv.isTensor()) {
      if (state_dict_names_.count(full)) {
        Node* g = emit("prim.GetAttr", {}, n, f);
        g->set_weight("value", full);
        return;
      }
      f.env[out] = Binding{tensor_constant(iv.toTensor(), f, n, "the tensor attribute '" + full + "'"), {}};
      return;
    }
    if (iv.isTensorList()) {
      // A list of the module's own parameters (nn.LSTM's _flat_weights): a list of weight reads.
      std::map<const void*, std::string> own;
      for (const auto& p : owner.module.named_parameters(/*recurse=*/false))
        own[p.value.unsafeGetTensorImpl()] = join_path(owner.path, p.name);
      std::vector<Value*> items;
      for (const at::Tensor& t : iv.toTensorVector()) {
        auto w = own.find(t.unsafeGetTensorImpl());
        if (w == own.end() || !state_dict_names_.count(w->second))
          unsupported(n, "attribute '" + full + "' is a list of tensors that are not the module's parameters", f,
                      "keep the tensors as parameters or buffers");
        Node* g = append("prim.GetAttr", {}, f, n);
        g->set_weight("value", w->second);
        items.push_back(g->add_output(Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())), t.sizes().vec())));
      }
      Node* l = append("prim.ListConstruct", items, f, n);
      f.env[out] = Binding{l->add_output(convert_type(out->type()), name_hint(out)), {}};
      return;
    }
    f.env[out] = Binding{constant_value(iv, out->type(), f, n), {}};
  }

  void lift_unpack(const jit::Node* n, Frame& f) {
    Value* in = value_of(f, n->input(), n);
    const char* build = n->kind() == c10::prim::TupleUnpack ? "prim.TupleConstruct" : "prim.ListConstruct";
    Node* p = in->node();
    if (p->is(build) && p->num_inputs() == n->outputs().size()) {
      // Unpacking what was just packed (the tracer does this at every module boundary).
      for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = Binding{p->input(i), {}};
      return;
    }
    emit(n->kind() == c10::prim::TupleUnpack ? "prim.TupleUnpack" : "prim.ListUnpack", {in}, n, f);
  }

  void lift_tuple_index(const jit::Node* n, Frame& f) {
    Value* tuple = value_of(f, n->input(0), n);
    Value* index = value_of(f, n->input(1), n);
    const AttrValue* c = index->constant();
    Node* p = tuple->node();
    if (c && std::holds_alternative<int64_t>(*c) && p->is("prim.TupleConstruct")) {
      int64_t i = std::get<int64_t>(*c);
      if (i < 0) i += static_cast<int64_t>(p->num_inputs());
      if (i >= 0 && i < static_cast<int64_t>(p->num_inputs())) {
        f.env[n->output()] = Binding{p->input(static_cast<size_t>(i)), {}};
        return;
      }
    }
    emit("prim.TupleIndex", {tuple, index}, n, f);
  }

  // ---- calls ----

  void lift_call(const jit::Node* n, Frame& f) {
    auto it = f.env.find(n->input(0));
    if (it == f.env.end() || !it->second.module)
      unsupported(n, "method call on something that is not a module", f,
                  "only calls of submodules are supported");
    ModuleRef callee = *it->second.module;
    std::string method = n->s(c10::attr::name);
    auto m = callee.module.find_method(method);
    if (!m)
      unsupported(n, "module '" + callee.path + "' has no method " + method, f, "re-export the model");
    if (callee.path != f.self.path && try_leaf(n, callee, m->graph(), f)) return;
    std::shared_ptr<jit::Graph> g = prepared(m->graph(), callee.module, false);
    if (++depth_ > 200)
      unsupported(n, "modules are nested more than 200 deep", f, "simplify the model");
    Frame sub;
    sub.self = callee;
    sub.scope = callee.path;
    sub.caller = &f;
    sub.call = n;
    sub.env[g->inputs().at(0)] = Binding{nullptr, callee};
    for (size_t i = 1; i < g->inputs().size() && i < n->inputs().size(); ++i)
      sub.env[g->inputs()[i]] = f.env.at(n->input(i));
    lift_block(*g->block(), sub);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      auto r = sub.env.find(g->outputs().at(i));
      TT_ASSERT(r != sub.env.end(), "inlined method result not lifted");
      f.env[n->output(i)] = r->second;
    }
    --depth_;
  }

  // A TorchScript function the preparation could not inline (not a graph function).
  void lift_call_function(const jit::Node* n, Frame& f) {
    auto ft = n->input(0)->type()->cast<c10::FunctionType>();
    jit::Function* fn = ft ? ft->function() : nullptr;
    if (!fn || !fn->isGraphFunction())
      unsupported(n, "a call of a function without a TorchScript graph", f,
                  "replace the call in the model");
    if (plain_name(fn->qualname().qualifiedName()) == kInterpolate && lift_interpolate(n, f)) return;
    std::shared_ptr<jit::Graph> g = prepared(jit::toGraphFunction(*fn).graph(), f.self.module, false);
    if (++depth_ > 200) unsupported(n, "calls are nested more than 200 deep", f, "simplify the model");
    Frame sub;
    sub.self = f.self;
    sub.scope = f.scope;
    sub.caller = &f;
    sub.call = n;
    sub.arg_offset = 1;
    for (size_t i = 0; i < g->inputs().size() && i + 1 < n->inputs().size(); ++i)
      sub.env[g->inputs()[i]] = binding_of(f, n->input(i + 1));
    lift_block(*g->block(), sub);
    for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = binding_of(sub, g->outputs().at(i));
    --depth_;
  }

  // F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
  // antialias) as the F.interpolate op (its TorchScript body builds the scale list by appending
  // in a loop over the input's rank), when the last two arguments leave the result as the op row
  // computes it. False: inline the body instead.
  bool lift_interpolate(const jit::Node* n, Frame& f) {
    if (n->inputs().size() != 8) return false;  // the function value, then 7 arguments
    std::vector<Value*> in;
    for (size_t i = 1; i < n->inputs().size(); ++i) in.push_back(value_of(f, n->input(i), n));
    const AttrValue* recompute = in[5]->constant();
    const AttrValue* antialias = in[6]->constant();
    bool recompute_ok = recompute && (std::holds_alternative<NoneAttr>(*recompute) ||
                                      (std::holds_alternative<bool>(*recompute) && !std::get<bool>(*recompute)));
    bool antialias_ok = antialias && std::holds_alternative<bool>(*antialias) && !std::get<bool>(*antialias);
    if (!recompute_ok || !antialias_ok) return false;
    Node* node = append("F.interpolate", {in[0], in[1], in[2], in[3], in[4]}, f, n);
    f.env[n->output()] = Binding{node->add_output(convert_type(n->output()->type()), name_hint(n->output())), {}};
    return true;
  }

  // ---- scripted method graphs (Note [Scripted method graphs]) ----

  static bool has_script_constructs(const jit::Block& b, const jit::Value* self) {
    for (const jit::Node* n : b.nodes()) {
      auto k = n->kind();
      if (k == c10::prim::If || k == c10::prim::Loop || k == c10::prim::CallFunction) return true;
      if (k == c10::prim::GetAttr && n->input(0) == self) {
        const c10::TypePtr& t = n->output()->type();
        auto ct = t->cast<c10::ClassType>();
        if (!(ct && ct->is_module()) && !t->isSubtypeOf(*c10::TensorType::get())) return true;
      }
      for (const jit::Block* sub : n->blocks())
        if (has_script_constructs(*sub, self)) return true;
    }
    return false;
  }

  // Non-tensor attributes of self (and of its submodules, reached through GetAttr chains) become
  // constants.
  static void fold_attrs(jit::Graph& g, jit::Block* b, std::unordered_map<const jit::Value*, jit::Module>& owners) {
    for (auto it = b->nodes().begin(); it != b->nodes().end();) {
      jit::Node* n = *it;
      ++it;
      for (jit::Block* sub : n->blocks()) fold_attrs(g, sub, owners);
      if (n->kind() != c10::prim::GetAttr) continue;
      auto o = owners.find(n->input(0));
      if (o == owners.end()) continue;
      std::string name = n->s(c10::attr::name);
      if (!o->second.hasattr(name)) continue;
      IValue v = o->second.attr(name);
      if (v.isModule()) {
        owners.emplace(n->output(), jit::Module(v.toObject()));
        continue;
      }
      if (v.isTensor() || v.isObject()) continue;
      jit::WithInsertPoint guard(n);
      auto c = g.insertConstant(v, c10::nullopt, n->scope());  // may throw for odd IValues
      c->node()->setSourceRange(n->sourceRange());
      n->output()->replaceAllUsesWith(c);
      n->destroy();
    }
  }

  // prim::CallFunction nodes inlined (repeatedly: inlined bodies call further functions).
  static void inline_functions(jit::Graph& g) {
    for (int round = 0; round < 50; ++round) {
      std::vector<jit::Node*> calls;
      std::function<void(jit::Block*)> collect = [&](jit::Block* b) {
        for (jit::Node* n : b->nodes()) {
          if (n->kind() == c10::prim::CallFunction && jit::tryToGraphFunction(n) &&
              plain_name(jit::tryToGraphFunction(n)->qualname().qualifiedName()) != kInterpolate)
            calls.push_back(n);
          for (jit::Block* sub : n->blocks()) collect(sub);
        }
      };
      collect(g.block());
      if (calls.empty()) return;
      for (jit::Node* n : calls) {
        jit::GraphFunction* fn = jit::tryToGraphFunction(n);
        n->removeInput(0);  // the function value; the callee's inputs are the rest
        // PyTorch's own functions (F.adaptive_avg_pool2d, TorchScript builtins) check their
        // arguments again when the generated code calls them: their input guards are not the
        // model's. The model's own functions are named __torch__.<module>.<function>.
        std::shared_ptr<jit::Graph> body = fn->graph()->copy();
        if (fn->qualname().qualifiedName().rfind("__torch__.", 0) != 0) drop_raise_guards(body->block());
        jit::inlineCallTo(n, fn, body.get());
      }
    }
  }

  // An If without results whose branches only raise or do nothing (an input check).
  static bool is_raise_guard(const jit::Node* n) {
    if (n->kind() != c10::prim::If || !n->outputs().empty()) return false;
    bool raises = false;
    for (const jit::Block* b : n->blocks()) {
      for (const jit::Node* m : b->nodes()) {
        auto k = m->kind();
        if (k == c10::prim::RaiseException) raises = true;
        else if (!m->blocks().empty() || (m->hasSideEffects() && k != c10::aten::warn))
          return false;  // the message is built from pure ops (dim, format, ...)
      }
    }
    return raises;
  }

  // builtin_only: only the guards of TorchScript's builtin functions, compiled from source text
  // into the method itself (`assert` in aten::list_with_default; their location is "<string>").
  static void drop_raise_guards(jit::Block* b, bool builtin_only = false) {
    for (auto it = b->nodes().begin(); it != b->nodes().end();) {
      jit::Node* n = *it;
      ++it;
      if (is_raise_guard(n) && (!builtin_only || node_loc(n).rfind("<string>:", 0) == 0)) {
        n->destroy();
        continue;
      }
      for (jit::Block* sub : n->blocks()) drop_raise_guards(sub, builtin_only);
    }
  }

  // The graph to lift for `g` called on `self` (the graph itself for a traced method).
  std::shared_ptr<jit::Graph> prepared(const std::shared_ptr<jit::Graph>& g, const jit::Module& self, bool leaf) {
    const jit::Value* self_in = g->inputs().empty() ? nullptr : g->inputs()[0];
    if (!has_script_constructs(*g->block(), self_in)) return g;
    auto key = std::make_tuple(g.get(), static_cast<const void*>(self._ivalue().get()), leaf);
    auto it = prepared_.find(key);
    if (it != prepared_.end()) return it->second;
    std::shared_ptr<jit::Graph> copy = g->copy();
    try {
      if (leaf)
        jit::Inline(*copy);
      else
        inline_functions(*copy);
      std::unordered_map<const jit::Value*, jit::Module> owners;
      auto st = copy->inputs().empty() ? nullptr : copy->inputs()[0]->type()->cast<c10::ClassType>();
      if (st && st->is_module()) owners.emplace(copy->inputs()[0], self);
      fold_attrs(*copy, copy->block(), owners);
      jit::ConstantPropagation(copy);
      if (!leaf) drop_raise_guards(copy->block(), /*builtin_only=*/true);
      if (leaf) {
        drop_raise_guards(copy->block());
        jit::UnrollConstantLoops(copy);
        jit::RemoveListMutation(copy);
        jit::ConstantPropagation(copy);
      }
      jit::EliminateDeadCode(copy);
    } catch (const std::exception& e) {
      // Preparation is a simplification; the plain graph is still a faithful input.
      spdlog::debug("preparing a scripted method graph failed ({}); lifting it as it is", first_line(e.what()));
      copy = g;
    }
    prepared_[key] = copy;
    return copy;
  }

  // Note [Scripted RNN and attention modules]
  // The scripted forward of nn.LSTM / nn.GRU / nn.MultiheadAttention is mostly argument handling
  // (unbatched inputs, an Optional hidden state, dim checks raising formatted messages, the fast
  // path's conditions) around one ATen call; even fully inlined with its guards dropped it does
  // not reduce to the single key op the recipes look for. For exactly these classes the call
  // itself is lifted as the module op the traced path produces: the hyperparameters are the
  // module's own attributes (torch.jit.script keeps them), its parameters must be exactly the
  // ones the constructor creates from them, and the call's arguments must be a form the module op
  // runs (interpreter and emitters). The op's result is the call's result, in the forward's own
  // structure: (output, (h, c)), (output, h) or (attn_output, attn_weights or None). Anything
  // else is inlined as before (Note [Scripted method graphs]).
  bool try_scripted_leaf(const jit::Node* call, const ModuleRef& callee, const std::string& type, Frame& f) {
    const jit::Module& mod = callee.module;
    auto attr = [&](const char* name) -> IValue { return mod.hasattr(name) ? mod.attr(name) : IValue(); };
    auto int_attr = [&](const char* name) -> std::optional<int64_t> {
      IValue v = attr(name);
      return v.isInt() ? std::optional<int64_t>(v.toInt()) : std::nullopt;
    };
    auto bool_attr = [&](const char* name) -> std::optional<bool> {
      IValue v = attr(name);
      return v.isBool() ? std::optional<bool>(v.toBool()) : std::nullopt;
    };
    auto double_attr = [&](const char* name) -> std::optional<double> {
      IValue v = attr(name);
      if (v.isInt()) return static_cast<double>(v.toInt());
      return v.isDouble() ? std::optional<double>(v.toDouble()) : std::nullopt;
    };
    auto is_tensor = [](const jit::Value* v) { return v->type()->isSubtypeOf(*c10::TensorType::get()); };
    auto is_none = [](const jit::Value* v) { return v->type()->kind() == c10::TypeKind::NoneType; };
    auto reject = [&](const std::string& why) {
      spdlog::debug("scripted {} ({}) not lifted as a module op: {}", callee.path, type, why);
      return false;
    };
    const bool lstm = type == "torch.nn.modules.rnn.LSTM", gru = type == "torch.nn.modules.rnn.GRU";
    const bool mha = type == "torch.nn.modules.activation.MultiheadAttention";
    const bool enc_layer = type == "torch.nn.modules.transformer.TransformerEncoderLayer";
    if (!lstm && !gru && !mha && !enc_layer) return false;
    // nn.LSTM / nn.GRU overload forward (forward__0 takes a tensor, forward__1 a PackedSequence,
    // which the input type check below rejects).
    const std::string& method = call->s(c10::attr::name);
    if (method != "forward" && method.rfind("forward__", 0) != 0) return reject("calls " + method);
    if (call->outputs().size() != 1) return reject("unexpected results");

    LeafMatch m;  // op, attrs and the parameter names the constructor creates
    std::vector<Value*> ins;
    if (enc_layer) {
      // forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)
      std::string why;
      auto lm = scripted_encoder_layer(mod, why);
      if (!lm) return reject(why);
      if (call->inputs().size() != 5 || !is_tensor(call->input(1))) return reject("called with other than (src, ...)");
      if (!is_none(call->input(2)) || !is_none(call->input(3))) return reject("called with a mask");
      auto causal = jit::toIValue(call->input(4));
      if (!causal || !causal->isBool() || causal->toBool()) return reject("is_causal is not a constant False");
      ins.push_back(value_of(f, call->input(1), call));
      m = std::move(*lm);
    } else if (lstm || gru) {
      IValue mode = attr("mode");
      auto input_size = int_attr("input_size"), hidden = int_attr("hidden_size"), layers = int_attr("num_layers");
      auto bias = bool_attr("bias"), batch_first = bool_attr("batch_first"), bidir = bool_attr("bidirectional");
      auto dropout = double_attr("dropout");
      auto proj = int_attr("proj_size");
      if (!mode.isString() || mode.toStringRef() != (lstm ? "LSTM" : "GRU") || !input_size || !hidden ||
          !layers || !bias || !batch_first || !bidir || !dropout || !proj)
        return reject("its attributes are not those of the torch.nn class");
      if (gru && *proj != 0) return reject("proj_size on a GRU");
      for (std::string& w : rnn_weight_names(*layers, *bidir, *bias, *proj > 0)) m.weights.insert(std::move(w));
      int64_t gates = lstm ? 4 : 3;
      IValue w_ih = attr("weight_ih_l0");
      if (!w_ih.isTensor() || w_ih.toTensor().dim() != 2 || w_ih.toTensor().size(0) != gates * *hidden ||
          w_ih.toTensor().size(1) != *input_size)
        return reject("weight_ih_l0 does not match input_size/hidden_size");
      // forward(input, hx=None): hx is None, an (h0, c0) tuple (LSTM) or a tensor (GRU).
      if (call->inputs().size() != 3 || !is_tensor(call->input(1)))
        return reject("called with other than (input[, hx])");
      const jit::Value* hx = call->input(2);
      bool hx_ok = is_none(hx);
      if (!hx_ok && lstm) {
        auto tt = hx->type()->cast<c10::TupleType>();
        hx_ok = tt && tt->elements().size() == 2 &&
                std::all_of(tt->elements().begin(), tt->elements().end(),
                            [](const c10::TypePtr& e) { return e->isSubtypeOf(*c10::TensorType::get()); });
      } else if (!hx_ok) {
        hx_ok = is_tensor(hx);
      }
      if (!hx_ok) return reject("the hidden state is neither None nor " + std::string(lstm ? "(h0, c0)" : "a tensor"));
      ins.push_back(value_of(f, call->input(1), call));
      if (!is_none(hx)) ins.push_back(value_of(f, hx, call));
      m.op = lstm ? "nn.LSTM" : "nn.GRU";
      m.attrs.set("input_size", *input_size);
      m.attrs.set("hidden_size", *hidden);
      m.attrs.set("num_layers", *layers);
      m.attrs.set("bias", *bias);
      m.attrs.set("batch_first", *batch_first);
      m.attrs.set("dropout", *dropout);
      m.attrs.set("bidirectional", *bidir);
      if (lstm) m.attrs.set("proj_size", *proj);
    } else {
      auto embed_dim = int_attr("embed_dim"), num_heads = int_attr("num_heads");
      auto kdim = int_attr("kdim"), vdim = int_attr("vdim");
      auto same = bool_attr("_qkv_same_embed_dim"), zero_attn = bool_attr("add_zero_attn");
      auto batch_first = bool_attr("batch_first");
      auto dropout = double_attr("dropout");
      if (!embed_dim || !num_heads || !kdim || !vdim || !same || !zero_attn || !batch_first || !dropout)
        return reject("its attributes are not those of the torch.nn class");
      // What the interpreter's fused kernel computes: packed q/k/v projections with biases.
      if (!*same || *kdim != *embed_dim || *vdim != *embed_dim)
        return reject("separate q/k/v projections (kdim/vdim != embed_dim)");
      if (*zero_attn || !attr("bias_k").isNone() || !attr("bias_v").isNone())
        return reject("add_bias_kv or add_zero_attn");
      if (!attr("in_proj_bias").isTensor()) return reject("bias=False");
      IValue w = attr("in_proj_weight");
      if (!w.isTensor() || w.toTensor().dim() != 2 || w.toTensor().size(0) != 3 * *embed_dim ||
          w.toTensor().size(1) != *embed_dim)
        return reject("in_proj_weight does not match embed_dim");
      m.weights = {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
      // forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
      //         average_attn_weights=True[, is_causal=False] (torch >= 2.0)); TorchScript passes
      // every argument. is_causal needs a mask (the module raises without one): it must be False.
      size_t n_in = call->inputs().size();
      if ((n_in != 8 && n_in != 9) || !is_tensor(call->input(1)) || !is_tensor(call->input(2)) ||
          !is_tensor(call->input(3)))
        return reject("called with other than (query, key, value, ...)");
      if (n_in == 9) {
        auto causal = jit::toIValue(call->input(8));
        if (!causal || !causal->isBool() || causal->toBool()) return reject("is_causal is not a constant False");
      }
      if (!is_none(call->input(4)) || !is_none(call->input(6))) return reject("attention with a mask");
      auto need_weights = jit::toIValue(call->input(5)), average = jit::toIValue(call->input(7));
      if (!need_weights || !need_weights->isBool() || !average || !average->isBool())
        return reject("need_weights / average_attn_weights are not constants");
      for (size_t i = 1; i <= 3; ++i) ins.push_back(value_of(f, call->input(i), call));
      // The traced form's arguments: defaults left out from the end.
      if (!need_weights->toBool() || !average->toBool()) {
        ins.push_back(constant_value(IValue(), nullptr, f, call));
        ins.push_back(constant_value(*need_weights, nullptr, f, call));
      }
      if (!average->toBool()) {
        ins.push_back(constant_value(IValue(), nullptr, f, call));
        ins.push_back(constant_value(*average, nullptr, f, call));
      }
      m.op = "nn.MultiheadAttention";
      m.attrs.set("embed_dim", *embed_dim);
      m.attrs.set("num_heads", *num_heads);
      m.attrs.set("dropout", *dropout);
      m.attrs.set("bias", true);
      m.attrs.set("add_bias_kv", false);
      m.attrs.set("add_zero_attn", false);
      m.attrs.set("kdim", *kdim);
      m.attrs.set("vdim", *vdim);
      m.attrs.set("batch_first", *batch_first);
    }
    std::vector<std::pair<std::string, bool>> own;  // (relative name, is_param), state_dict order
    collect_names(mod, "", own);
    std::set<std::string> have;
    for (const auto& o : own) have.insert(o.first);
    if (have != m.weights) return reject("its parameters/buffers differ from what the constructor creates");

    spdlog::debug("scripted {} lifted as {} from its attributes", callee.path, m.op);
    Node* node = append(m.op, ins, f, call);
    node->attrs() = m.attrs;
    for (const auto& o : own) node->set_weight(o.first, join_path(callee.path, o.first));
    node->set_module(callee.path);
    f.env[call->output()] = Binding{node->add_output(convert_type(call->output()->type())), {}};
    return true;
  }

  // A scripted nn.TransformerEncoder called without masks: its layers one after the other, each an
  // nn.TransformerEncoderLayer (scripted_encoder_layer), then its norm, in the encoder's scope
  // (what it computes without a src_key_padding_mask; its forward's fast-path checks and nested
  // tensor conversion are not lifted). false, with a debug line, for anything else.
  bool lift_scripted_encoder(const jit::Node* call, const ModuleRef& callee, Frame& f) {
    auto reject = [&](const std::string& why) {
      spdlog::debug("scripted {} (nn.TransformerEncoder) not lifted: {}", callee.path, why);
      return false;
    };
    const jit::Module& mod = callee.module;
    // forward(src, mask=None, src_key_padding_mask=None, is_causal=None)
    if (call->s(c10::attr::name) != "forward" || call->inputs().size() != 5 || call->outputs().size() != 1 ||
        !call->input(1)->type()->isSubtypeOf(*c10::TensorType::get()))
      return reject("called with other than (src, ...)");
    for (size_t i : {2, 3})
      if (call->input(i)->type()->kind() != c10::TypeKind::NoneType) return reject("called with a mask");
    if (call->input(4)->type()->kind() != c10::TypeKind::NoneType) {
      auto causal = jit::toIValue(call->input(4));
      if (!causal || !causal->isBool() || causal->toBool()) return reject("is_causal is not None or a constant False");
    }
    if (!mod.hasattr("layers") || !mod.attr("layers").isObject() || !mod.hasattr("norm"))
      return reject("its attributes are not those of the torch.nn class");
    jit::Module layers(mod.attr("layers").toObject());
    std::vector<std::pair<std::string, LeafMatch>> steps;  // (relative path, op)
    std::set<std::string> covered;
    for (const auto& child : layers.named_children()) {
      if (plain_type_name(child.value) != "torch.nn.modules.transformer.TransformerEncoderLayer")
        return reject("layer " + child.name + " is not an nn.TransformerEncoderLayer");
      std::string why;
      auto lm = scripted_encoder_layer(child.value, why);
      if (!lm) return reject("layer " + child.name + ": " + why);
      steps.emplace_back("layers." + child.name, std::move(*lm));
    }
    if (steps.empty()) return reject("no layers");
    IValue norm = mod.attr("norm");
    if (!norm.isNone()) {
      if (!norm.isObject()) return reject("its norm is not a module");
      jit::Module nm(norm.toObject());
      IValue shape = nm.hasattr("normalized_shape") ? nm.attr("normalized_shape") : IValue();
      IValue eps = nm.hasattr("eps") ? nm.attr("eps") : IValue(), affine = nm.hasattr("elementwise_affine") ? nm.attr("elementwise_affine") : IValue();
      if (plain_type_name(nm) != "torch.nn.modules.normalization.LayerNorm" || !eps.isDouble() || !affine.isBool())
        return reject("its norm is not an nn.LayerNorm");
      std::vector<int64_t> dims;
      if (shape.isTuple()) {
        for (const IValue& e : shape.toTupleRef().elements()) {
          if (!e.isInt()) return reject("its norm's normalized_shape is not ints");
          dims.push_back(e.toInt());
        }
      } else if (shape.isIntList()) {
        dims = shape.toIntVector();
      } else {
        return reject("its norm's normalized_shape is not ints");
      }
      LeafMatch lm;
      lm.op = "nn.LayerNorm";
      lm.attrs.set("normalized_shape", dims);
      lm.attrs.set("eps", eps.toDouble());
      lm.attrs.set("elementwise_affine", affine.toBool());
      if (affine.toBool()) lm.weights = {"weight", "bias"};
      steps.emplace_back("norm", std::move(lm));
    }
    for (const auto& [path, lm] : steps)
      for (const std::string& w : lm.weights) covered.insert(path + "." + w);
    std::vector<std::pair<std::string, bool>> own;
    collect_names(mod, "", own);
    std::set<std::string> have;
    for (const auto& o : own) have.insert(o.first);
    if (have != covered) return reject("its parameters/buffers differ from what its layers and norm create");

    Value* x = value_of(f, call->input(1), call);
    for (const auto& [path, lm] : steps) {
      std::string module = join_path(callee.path, path);
      Node* node = append(lm.op, {x}, f, call);
      node->set_scope(callee.path);
      node->attrs() = lm.attrs;
      for (const auto& o : own)  // in state_dict order
        if (o.first.rfind(path + ".", 0) == 0) node->set_weight(o.first.substr(path.size() + 1), join_path(callee.path, o.first));
      node->set_module(module);
      x = node->add_output(convert_type(call->output()->type()));
    }
    spdlog::debug("scripted {} lifted as its {} layers", callee.path, steps.size());
    f.env[call->output()] = Binding{x, {}};
    return true;
  }

  bool try_leaf(const jit::Node* call, const ModuleRef& callee, const std::shared_ptr<jit::Graph>& method_graph,
                Frame& f) {
    std::string type = plain_type_name(callee.module);
    if (type == "torch.nn.modules.transformer.TransformerEncoder" &&
        has_script_constructs(*method_graph->block(), method_graph->inputs().empty() ? nullptr : method_graph->inputs()[0]))
      return lift_scripted_encoder(call, callee, f);
    auto rit = recipes().find(type);
    if (rit == recipes().end()) return false;
    if (has_script_constructs(*method_graph->block(), method_graph->inputs().empty() ? nullptr : method_graph->inputs()[0]) &&
        try_scripted_leaf(call, callee, type, f))
      return true;
    std::shared_ptr<jit::Graph> gp = prepared(method_graph, callee.module, true);
    const jit::Graph& g = *gp;
    MethodView view(g);
    LeafCtx ctx{view, callee.module, ""};
    std::optional<LeafMatch> match;
    if (!view.clean())
      ctx.why = "forward reads non-tensor attributes or has control flow";
    else
      match = rit->second(ctx);
    std::vector<std::pair<std::string, bool>> own;  // (relative name, is_param), state_dict order
    if (match) {
      collect_names(callee.module, "", own);
      std::set<std::string> have;
      for (const auto& o : own) have.insert(o.first);
      if (have != match->weights) {
        ctx.why = "its parameters/buffers differ from what the constructor creates";
        match.reset();
      }
    }
    // Dropout in eval returns its input: inplace=True writes nothing there.
    bool writes = match && match->attrs.get_bool("inplace", false) &&
                  !(match->op.find("Dropout") != std::string::npos && !callee.module.is_training());
    if (writes && call->inputs().size() > 1) {
      // Note [In-place writes while lifting]: an inplace=True module on a tensor other values
      // share is inlined, so that its in-place op is kept as such.
      const Binding& b = binding_of(f, call->input(1));
      std::string why = b.value ? exclusive_write(call, call->input(1), b.value, f) : "";
      if (!why.empty()) {
        ctx.why = "inplace=True on a tensor that " + why;
        match.reset();
      }
    }
    if (!match) {
      spdlog::debug("inlining {} ({}): {}", callee.path, type, ctx.why);
      spdlog::trace("method graph of {}:\n{}", callee.path, g.toString());
      // A call whose results are unused (e.g. an nn.Identity, which the tracer does not see) is
      // not worth a note.
      bool used = std::any_of(call->outputs().begin(), call->outputs().end(),
                              [](const jit::Value* v) { return v->hasUses(); });
      if (used && inlined_notes_.insert(callee.path).second) {
        diags_.add({Severity::Note, "leaf-inlined",
                    "module '" + callee.path + "' (" + type + ") was inlined, not lifted as a module: " + ctx.why,
                    "", f.scope, node_loc(call)});
      }
      return false;
    }

    // Inputs: the call's arguments in the module's Python structure.
    std::vector<Value*> args;
    for (size_t i = 1; i < call->inputs().size(); ++i) args.push_back(value_of(f, call->input(i), call));
    std::vector<Value*> ins;
    if (!match->call_args.empty()) {
      size_t next_const = 0;
      for (size_t idx : match->call_args) {
        if (idx == 0)
          ins.push_back(constant_value(match->call_consts.at(next_const++), nullptr, f, call));
        else
          ins.push_back(args.at(idx - 1));
      }
    } else if (match->hidden_inputs == 2) {
      Node* t = append("prim.TupleConstruct", {args.at(1), args.at(2)}, f, call);
      Value* hc = t->add_output(Type::tuple({args[1]->type(), args[2]->type()}));
      ins = {args.at(0), hc};
    } else {
      ins = args;
    }

    Node* node = append(match->op, ins, f, call);
    node->attrs() = match->attrs;
    // Weight refs in the module's own (state_dict) order.
    for (const auto& o : own) node->set_weight(o.first, join_path(callee.path, o.first));
    node->set_module(callee.path);

    std::string out_name = call->outputs().size() == 1 ? name_hint(call->output()) : "";
    if (match->result == LeafMatch::Result::Single) {
      f.env[call->output()] = Binding{node->add_output(convert_type(g.outputs().at(0)->type()), out_name), {}};
      return true;
    }
    // (a, b) or (a, (b, c)) in Python; the call site saw the flattened (a, b[, c]) or the part of
    // it that was used.
    Type any = Type::any();
    bool nested = match->result == LeafMatch::Result::OutAndPair;
    Type second = nested ? Type::tuple({any, any}) : any;
    Value* r = node->add_output(Type::tuple({any, second}));
    Node* u1 = append("prim.TupleUnpack", {r}, f, call);
    std::vector<Value*> flat = {u1->add_output(any)};
    Value* b = u1->add_output(second);
    if (nested) {
      Node* u2 = append("prim.TupleUnpack", {b}, f, call);
      flat.push_back(u2->add_output(any));
      flat.push_back(u2->add_output(any));
    } else {
      flat.push_back(b);
    }
    // Types of the flattened results from the method's key node where known.
    if (!match->returns_tuple) {
      Value* v = flat.at(match->flat_returned.at(0));
      v->set_type(convert_type(g.outputs().at(0)->type()));
      f.env[call->output()] = Binding{v, {}};
      return true;
    }
    std::vector<Value*> parts;
    std::vector<Type> types;
    const auto* tt = g.outputs().at(0)->type()->cast<c10::TupleType>().get();
    for (size_t k = 0; k < match->flat_returned.size(); ++k) {
      Value* v = flat.at(match->flat_returned[k]);
      if (tt && k < tt->elements().size()) v->set_type(convert_type(tt->elements()[k]));
      parts.push_back(v);
      types.push_back(v->type());
    }
    Node* t = append("prim.TupleConstruct", parts, f, call);
    f.env[call->output()] = Binding{t->add_output(Type::tuple(types)), {}};
    return true;
  }

  // ---- in-place writes (Note [In-place writes while lifting]) ----

  // Note [In-place writes while lifting]
  // An ATen op that writes into an argument (x.clamp_(), torch.add(a, b, out=c), x.copy_(y)) is
  // lifted as its out-of-place twin only when that computes the same: nothing else can see the
  // tensor written (exclusive_write); otherwise it stays an in-place node, written as the same call
  // on the same view, in program order (exec/alias.h, Note [In-place writes]). Never lowered to a
  // twin whose write would be lost: a view of the tensor, the base it is a view of, a container
  // holding it, or (scripted) the same variable read later would all miss the write. Writes into
  // a weight or a constant, and in-place shape changes (unsqueeze_, t_, resize_) of shared
  // tensors, are refused (exit 4).
  // Returns true when the node was lifted here (kept in place); false: lift it as usual.
  bool lift_inplace(const jit::Node* n, const c10::FunctionSchema& schema, const std::vector<Value*>& ins, Frame& f) {
    const auto& args = schema.arguments();
    // Tensors only: list and dict mutation (append, _set_item, pop) has its own handling.
    std::vector<size_t> written;
    for (size_t i = 0; i < args.size() && i < ins.size(); ++i)
      if (args[i].alias_info() && args[i].alias_info()->isWrite() &&
          args[i].type()->kind() == c10::TypeKind::TensorType)
        written.push_back(i);
    if (written.empty()) return false;
    const std::string& base = schema.name();
    std::string short_base = base.substr(base.find("::") + 2);
    // dropout_(x, p, train=False) (nn.Dropout(inplace=True) in eval) writes nothing: x itself.
    static const std::set<std::string> dropouts = {"aten::dropout_", "aten::feature_dropout_",
                                                   "aten::alpha_dropout_", "aten::feature_alpha_dropout_"};
    if (dropouts.count(base) && ins.size() == 3 && n->outputs().size() == 1) {
      const AttrValue* train = ins[2]->constant();
      if (train && std::holds_alternative<bool>(*train) && !std::get<bool>(*train)) {
        f.env[n->output()] = Binding{ins[0], {}};
        return true;
      }
    }
    bool inplace_name = is_inplace_name(short_base);
    std::string why;
    for (size_t i : written) {
      if (std::string w = write_into_state_problem(ins[i]); !w.empty())
        unsupported(n, "an in-place write into " + w, f,
                    "write into a copy (x = x.clone()) or make the update outside the model");
      if (why.empty()) why = exclusive_write(n, n->input(i), ins[i], f);
    }
    if (why.empty() && inplace_name && written == std::vector<size_t>{0}) return false;  // the twin is exact
    if (!why.empty() && is_metadata_inplace(base))
      unsupported(n, "an in-place change of a tensor's shape or strides (" + short_base + ") on a tensor that " + why, f,
                  "use the out-of-place op (" + short_base.substr(0, short_base.size() - 1) + ") and its result");
    std::string op = base + "." + (schema.overload_name().empty() ? "default" : schema.overload_name());
    emit(op, ins, n, f);
    spdlog::debug("kept in place: {} ({})", op, why.empty() ? "an out= form" : why);
    return true;
  }

  // "" when a write into `v` (the IR value of JIT value `jv`, an argument of node `n`) can be lifted
  // as an out-of-place op: nothing else shares its memory now, and (scripted graphs) the variable
  // is not read after the write nor defined outside the loop or branch that writes it. Otherwise
  // why not, as "<reason>" completing "a tensor that ...".
  std::string exclusive_write(const jit::Node* n, const jit::Value* jv, Value* v, const Frame& f) {
    const Node* p = v->node();
    if (p == graph_->block()->param_node()) return "is an input of the model (the caller sees the write)";
    if (p->owning_block() == nullptr || p == p->owning_block()->param_node())
      return "is carried by a loop or branch";
    // An inplace=True module op returns its input, which was exclusive when the call was lifted
    // (try_leaf inlines it otherwise) and is read by nothing else: the result is exclusive too.
    bool inplace_module = !p->module().empty() && p->attrs().get_bool("inplace", false) &&
                          p->num_inputs() > 0 && p->input(0)->num_uses() == 1;
    if (!inplace_module && may_return_alias(*p)) return "is a view or alias of another tensor (" + p->op() + ")";
    for (const Use& u : v->uses()) {
      std::vector<size_t> shared = aliased_inputs(*u.user);
      if (std::find(shared.begin(), shared.end(), u.index) != shared.end())
        return "another value is a view or alias of (" + u.user->op() + ")";
    }
    // The JIT side: later reads of the same variable, through the callers' frames. The lifter
    // binds several JIT values to one IR value where Python has one object under several names
    // (x[:] is x, a module call returning its argument, tuple packing at module boundaries): a
    // later read of any of them sees the write.
    auto read_later = [](const jit::Value* w, const jit::Node* pos) {
      if (w->node()->owningBlock() != pos->owningBlock()) return true;
      for (const jit::Use& u : w->uses())
        if (u.user != pos && u.user->isAfter(pos)) return true;
      return false;
    };
    const Frame* fr = &f;
    while (jv && fr) {
      if (jv->node()->owningBlock() != n->owningBlock()) return "was made outside the loop or branch that writes it";
      if (read_later(jv, n)) return "is read again after the write";
      for (const auto& [w, b] : fr->env)
        if (b.value == v && w != jv && read_later(w, n))
          return "is also another variable, read again after the write";
      if (jv->node()->kind() != c10::prim::Param || !fr->caller || !fr->call) break;
      size_t k = jv->offset() + fr->arg_offset;
      if (k >= fr->call->inputs().size()) break;
      jv = fr->call->input(k);
      n = fr->call;
      fr = fr->caller;
    }
    return "";
  }

  // "a weight ('conv.weight')" / "a constant tensor" when `v` may be (a view of) one; "" otherwise.
  static std::string write_into_state_problem(const Value* v) {
    std::vector<const Value*> todo = {v};
    std::set<const Value*> seen;
    while (!todo.empty()) {
      const Value* x = todo.back();
      todo.pop_back();
      if (!seen.insert(x).second) continue;
      const Node* p = x->node();
      if (p->is("prim.GetAttr")) return "the weight '" + p->weight("value") + "'";
      if (p->is("prim.Constant") && x->type().is_tensor()) return "a constant tensor";
      if (p->owning_block() && p != p->owning_block()->param_node())
        for (size_t i : aliased_inputs(*p)) todo.push_back(p->input(i));
    }
    return "";
  }

  // ---- ATen ops ----

  void lift_op(const jit::Node* n, Frame& f) {
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema)
      unsupported(n, "an operator without a known schema", f,
                  "load the library that defines it, or replace the op in the model");
    std::string qual = qualified_overload(*schema);
    const auto& args = schema->arguments();
    if (n->inputs().size() > args.size())
      unsupported(n, "a variadic operator", f, "replace the op in the model");
    std::vector<Value*> ins;
    for (size_t i = 0; i < n->inputs().size(); ++i) ins.push_back(value_of(f, n->input(i), n, int_role(args[i])));

    // aten::Int(prim::NumToTensor(x)) -> x, and the same for ScalarImplicit (tracer noise).
    if ((qual == "aten::Int.Tensor" || qual == "aten::ScalarImplicit") && ins.size() == 1) {
      Node* p = ins[0]->node();
      if (p->is("prim.NumToTensor") && p->num_inputs() == 1) {
        auto kind = p->input(0)->type().kind;
        if (kind == Type::Kind::Int || (qual == "aten::ScalarImplicit" && kind == Type::Kind::Float)) {
          f.env[n->output()] = Binding{p->input(0), {}};
          return;
        }
      }
    }

    // x[:] on some dim (start 0, end INT64_MAX, step 1): the tracer records one for every `:`
    // in an indexing expression; it is the tensor itself.
    if (qual == "aten::slice.Tensor" && ins.size() == 5) {
      auto int_is = [](Value* v, int64_t want) {
        const AttrValue* c = v->constant();
        return c && std::holds_alternative<int64_t>(*c) && std::get<int64_t>(*c) == want;
      };
      auto none_or = [&](Value* v, int64_t want) {
        const AttrValue* c = v->constant();
        return c && (std::holds_alternative<NoneAttr>(*c) || int_is(v, want));
      };
      if (ins[1]->constant() && none_or(ins[2], 0) &&
          none_or(ins[3], std::numeric_limits<int64_t>::max()) && int_is(ins[4], 1)) {
        f.env[n->output()] = Binding{ins[0], {}};
        return;
      }
    }

    if (lift_inplace(n, *schema, ins, f)) return;

    std::string op;
    if (!normalize(qual, ins, n, f, op)) {
      if (const OpInfo* info = find_op_by_aten(qual)) {
        op = info->name;
      } else {
        if (schema->name().rfind("aten::", 0) != 0)
          unsupported(n, "operator " + schema->name() + " from a custom library is not supported", f,
                      "replace it in the model or ask for it to be added");
        bool dispatched = c10::Dispatcher::singleton()
                              .findOp(c10::OperatorName(schema->name(), schema->overload_name()))
                              .has_value();
        if (dispatched) {
          op = schema->name() + "." + (schema->overload_name().empty() ? "default" : schema->overload_name());
        } else if (const char* py = qual == "aten::pow.int_to_int" ? nullptr : python_builtin(schema->name(), ins)) {
          op = py;
          if ((op == "operator.eq" || op == "operator.ne") && is_dtype_comparison(ins))
            for (Value*& v : ins) v = typed_int(v, IntRole::ScalarType, f, n);
        } else {
          unsupported(n, "TorchScript-only operator " + qual + " is not supported", f,
                      "rewrite that expression in the model, or trace it with "
                      "torch.jit.trace(model.eval(), example)");
        }
      }
    }
    if (Value* folded = fold_scalar(op, ins, n, f)) {
      f.env[n->output()] = Binding{folded, {}};
      return;
    }
    Node* node = emit(op, ins, n, f);
    if (is_aten_fallback(op) && !python_spells_fallback(op)) {
      diags_.warn("aten-fallback",
                  "no Python spelling for " + op + "; it is emitted as torch.ops.aten." +
                      op.substr(6) + "(...)",
                  node->num_outputs() ? node->output()->name() : "", f.scope, node->loc());
    }
  }

  // The Python spelling of a TorchScript-only scalar/list builtin (Note [Lifting control flow]);
  // nullptr when there is none. Lists only where Python gives the same result.
  static const char* python_builtin(const std::string& name, const std::vector<Value*>& ins) {
    static const std::map<std::string, const char*> numeric = {
        {"aten::add", "operator.add"},       {"aten::sub", "operator.sub"},
        {"aten::mul", "operator.mul"},       {"aten::div", "operator.truediv"},
        {"aten::floordiv", "operator.floordiv"}, {"aten::remainder", "operator.mod"},
        {"aten::neg", "operator.neg"},       {"aten::lt", "operator.lt"},
        {"aten::le", "operator.le"},         {"aten::gt", "operator.gt"},
        {"aten::ge", "operator.ge"},         {"aten::eq", "operator.eq"},
        {"aten::ne", "operator.ne"},         {"aten::__not__", "operator.not_"},
        {"aten::__and__", "operator.and_"},  {"aten::__or__", "operator.or_"},
        {"aten::__xor__", "operator.xor"},   {"aten::Int", "int"},
        {"aten::Float", "float"},            {"aten::Bool", "bool"},
        {"aten::floor", "math.floor"},       {"aten::ceil", "math.ceil"},
        {"aten::sqrt", "math.sqrt"},         {"aten::abs", "abs"},
        {"aten::pow", "operator.pow"},
    };
    static const std::map<std::string, const char*> any = {
        {"aten::__is__", "operator.is_"}, {"aten::__isnot__", "operator.is_not"},
        {"aten::__getitem__", "operator.getitem"}, {"aten::len", "len"}, {"aten::dim", "Tensor.dim"},
        {"aten::is_autocast_enabled", "torch.is_autocast_enabled"},
        {"aten::__contains__", "operator.contains"}, {"aten::any", "any"}, {"aten::all", "all"}, {"aten::sum", "sum"}, {"aten::is_grad_enabled", "torch.is_grad_enabled"},
    };
    if (auto it = any.find(name); it != any.end()) return it->second;
    auto it = numeric.find(name);
    if (it == numeric.end()) return nullptr;
    auto all_are = [&](Type::Kind kind) {
      return std::all_of(ins.begin(), ins.end(), [&](Value* v) { return v->type().kind == kind; });
    };
    // a + b, a == b, a != b on lists (hx.size() != expected_hidden_size in nn.LSTM)
    if ((name == "aten::add" || name == "aten::eq" || name == "aten::ne") && ins.size() == 2 &&
        all_are(Type::Kind::List))
      return it->second;
    // dtypes are ints in TorchScript: x.dtype == y.dtype
    if ((name == "aten::eq" || name == "aten::ne") && ins.size() == 2 && is_dtype_comparison(ins))
      return it->second;
    for (Value* v : ins) {
      Type::Kind k = v->type().kind;
      if (k != Type::Kind::Int && k != Type::Kind::Float && k != Type::Kind::Bool && k != Type::Kind::Any)
        return nullptr;
    }
    return it->second;
  }

  // x.dtype == y.dtype, or x.dtype != torch.bool (the constant is an int in TorchScript).
  static bool is_dtype_comparison(const std::vector<Value*>& ins) {
    bool any = false;
    for (Value* v : ins) {
      Type::Kind k = v->type().kind;
      if (k == Type::Kind::ScalarType) any = true;
      else if (!(k == Type::Kind::Int && v->constant())) return false;
    }
    return any;
  }

  // A Python scalar builtin whose inputs are all non-tensor constants, evaluated now (e.g.
  // `self.downsample is not None` once the attribute became a constant).
  Value* fold_scalar(const std::string& op, const std::vector<Value*>& ins, const jit::Node* n, Frame& f) {
    static const std::set<std::string> builtins = {"len", "int", "float", "bool", "abs"};
    if (n->outputs().size() != 1 || (op.rfind("operator.", 0) != 0 && op.rfind("math.", 0) != 0 && !builtins.count(op)))
      return nullptr;
    std::vector<IValue> args;
    for (Value* v : ins) {
      const AttrValue* c = v->constant();
      if (!c || std::holds_alternative<at::Tensor>(*c)) return nullptr;
      args.push_back(attr_to_ivalue(*c, v->type()));
    }
    std::optional<std::vector<IValue>> r;
    try {
      r = call_aten(op, args);
    } catch (const std::exception&) {
      return nullptr;  // e.g. a division by zero: left for run time, where it belongs
    }
    if (!r || r->size() != 1) return nullptr;
    const IValue& v = (*r)[0];
    if (!v.isBool() && !v.isInt() && !v.isDouble() && !v.isNone()) return nullptr;
    return constant_value(v, n->output()->type(), f, n);
  }

  // Note [ATen normalisations]. Returns true (and sets op, rewrites ins) when it applies.
  bool normalize(const std::string& qual, std::vector<Value*>& ins, const jit::Node* n, Frame& f,
                 std::string& op) {
    auto const_int = [](Value* v) -> std::optional<int64_t> {
      const AttrValue* c = v->constant();
      if (c && std::holds_alternative<int64_t>(*c)) return std::get<int64_t>(*c);
      return std::nullopt;
    };
    auto const_bool = [](Value* v) -> std::optional<bool> {
      const AttrValue* c = v->constant();
      if (c && std::holds_alternative<bool>(*c)) return std::get<bool>(*c);
      return std::nullopt;
    };
    auto is_none = [](Value* v) { return v->is_none_constant(); };
    auto is_cpu = [](Value* v) {
      const AttrValue* c = v->constant();
      return c && std::holds_alternative<DeviceAttr>(*c) && std::get<DeviceAttr>(*c).name == "cpu";
    };
    // Length of a list value (prim.ListConstruct or a constant list), 0 when unknown.
    auto list_len = [](Value* v) -> size_t {
      if (v->node()->is("prim.ListConstruct")) return v->node()->num_inputs();
      const AttrValue* c = v->constant();
      if (c && std::holds_alternative<std::vector<int64_t>>(*c)) return std::get<std::vector<int64_t>>(*c).size();
      return 0;
    };
    auto all_zero = [&](Value* v) {
      if (v->node()->is("prim.ListConstruct")) {
        for (Value* e : v->node()->inputs())
          if (const_int(e) != std::optional<int64_t>(0)) return false;
        return true;
      }
      const AttrValue* c = v->constant();
      if (c && std::holds_alternative<std::vector<int64_t>>(*c)) {
        const auto& l = std::get<std::vector<int64_t>>(*c);
        return std::all_of(l.begin(), l.end(), [](int64_t x) { return x == 0; });
      }
      return false;
    };
    auto pick = [&](std::initializer_list<size_t> idx) {
      std::vector<Value*> out;
      for (size_t i : idx) out.push_back(ins.at(i));
      ins = std::move(out);
    };

    if (qual == "aten::_convolution" || qual == "aten::_convolution.deprecated") {
      size_t dims = list_len(ins.at(3));
      auto transposed = const_bool(ins.at(6));
      if (dims < 1 || dims > 3 || !transposed) return false;
      std::string nd = std::to_string(dims) + "d";
      if (*transposed) {
        op = "F.conv_transpose" + nd;
        pick({0, 1, 2, 3, 4, 7, 8, 5});  // (input, weight, bias, stride, padding, output_padding, groups, dilation)
      } else {
        if (!all_zero(ins.at(7))) return false;
        op = "F.conv" + nd;
        pick({0, 1, 2, 3, 4, 5, 8});  // (input, weight, bias, stride, padding, dilation, groups)
      }
      return true;
    }
    if (qual == "aten::_convolution_mode") {
      size_t dims = list_len(ins.at(3));
      if (dims < 1 || dims > 3) return false;
      op = "F.conv" + std::to_string(dims) + "d";  // same layout as conv{N}d.padding
      return true;
    }
    if (qual == "aten::constant_pad_nd") {
      Value* mode = add_constant(std::string("constant"), Type::of(Type::Kind::Str), f, n);
      ins = {ins.at(0), ins.at(1), mode, ins.at(2)};
      op = "F.pad";
      return true;
    }
    for (const char* family : {"reflection", "replication"}) {
      for (int d = 1; d <= 3; ++d) {
        if (qual != std::string("aten::") + family + "_pad" + std::to_string(d) + "d") continue;
        Value* mode = add_constant(std::string(family[2] == 'f' ? "reflect" : "replicate"), Type::of(Type::Kind::Str), f, n);
        Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
        ins = {ins.at(0), ins.at(1), mode, none};
        op = "F.pad";
        return true;
      }
    }
    {
      static const std::map<std::string, std::pair<const char*, bool>> upsample = {
          {"aten::upsample_nearest1d.vec", {"nearest", false}},
          {"aten::upsample_nearest2d.vec", {"nearest", false}},
          {"aten::upsample_nearest3d.vec", {"nearest", false}},
          {"aten::_upsample_nearest_exact1d.vec", {"nearest-exact", false}},
          {"aten::_upsample_nearest_exact2d.vec", {"nearest-exact", false}},
          {"aten::_upsample_nearest_exact3d.vec", {"nearest-exact", false}},
          {"aten::upsample_linear1d.vec", {"linear", true}},
          {"aten::upsample_bilinear2d.vec", {"bilinear", true}},
          {"aten::upsample_bicubic2d.vec", {"bicubic", true}},
          {"aten::upsample_trilinear3d.vec", {"trilinear", true}},
      };
      auto it = upsample.find(qual);
      if (it != upsample.end()) {
        Value* mode = add_constant(std::string(it->second.first), Type::of(Type::Kind::Str), f, n);
        if (it->second.second) {
          ins = {ins.at(0), ins.at(1), ins.at(3), mode, ins.at(2)};  // (x, size, scales, mode, align)
        } else {
          Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
          ins = {ins.at(0), ins.at(1), ins.at(2), mode, none};
        }
        op = "F.interpolate";
        return true;
      }
      // The default overloads (torch 2.x traces of size=...): (x, output_size, [align,] scales...)
      // are F.interpolate(x, size) when every scale is None; with scales they stay ATen calls.
      auto base = upsample.find(qual + ".vec");
      if (base != upsample.end()) {
        bool has_align = base->second.second;
        for (size_t i = has_align ? 3 : 2; i < ins.size(); ++i)
          if (!is_none(ins.at(i))) return false;
        Value* mode = add_constant(std::string(base->second.first), Type::of(Type::Kind::Str), f, n);
        Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
        Value* align = has_align ? ins.at(2) : add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
        ins = {ins.at(0), ins.at(1), none, mode, align};
        op = "F.interpolate";
        return true;
      }
    }
    if (qual == "aten::arange" || qual == "aten::arange.start") {
      // arange(end, ...) == arange(0, end, 1, ...); arange(start, end, ...) == arange(start, end, 1, ...)
      Value* one = add_constant(int64_t{1}, Type::of(Type::Kind::Int), f, n);
      if (qual == "aten::arange") {
        Value* zero = add_constant(int64_t{0}, Type::of(Type::Kind::Int), f, n);
        ins.insert(ins.begin(), zero);
      }
      ins.insert(ins.begin() + 2, one);
      op = "torch.arange";
      return true;
    }
    if (qual == "aten::to.device") {
      // (self, device, dtype, non_blocking, copy, memory_format): every tensor is on the CPU.
      if (!is_cpu(ins.at(1))) return false;
      pick({0, 2, 3, 4, 5});
      op = "Tensor.to";
      return true;
    }
    if (qual == "aten::to.dtype_layout") {
      // (self, dtype, layout, device, pin_memory, non_blocking, copy, memory_format)
      bool layout_ok = is_none(ins.at(2)) || const_int(ins.at(2)) == std::optional<int64_t>(0);
      bool device_ok = is_none(ins.at(3)) || is_cpu(ins.at(3));
      bool pin_ok = is_none(ins.at(4)) || const_bool(ins.at(4)) == std::optional<bool>(false);
      if (is_none(ins.at(1)) || !layout_ok || !device_ok || !pin_ok) return false;
      pick({0, 1, 5, 6, 7});
      op = "Tensor.to";
      return true;
    }
    return false;
  }

  // Removes constants, list/tuple builders, NumToTensor and GetAttr nodes left unused by the
  // folds above (pure nodes only).
  void sweep_dead_prims() {
    static const std::set<std::string> pure = {"prim.Constant", "prim.ListConstruct", "prim.TupleConstruct",
                                               "prim.NumToTensor", "prim.GetAttr", "prim.Uninitialized"};
    // Pre-order reversed: every use (also inside a nested block) is visited before its definition.
    std::vector<Node*> nodes = graph_->all_nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node* n = *it;
      if (!pure.count(n->op())) continue;
      bool used = std::any_of(n->outputs().begin(), n->outputs().end(), [](Value* v) { return v->has_uses(); });
      if (!used) n->destroy();
    }
  }

  jit::Module root_;
  Diagnostics& diags_;
  std::vector<std::pair<std::string, std::string>>* source_values_;  // Model::source_values
  std::unique_ptr<Graph> graph_;
  std::set<std::string> state_dict_names_;
  std::map<std::tuple<Value*, int, Block*>, Value*> typed_consts_;
  Block* cur_ = nullptr;  // where lifted nodes go (a prim.If/prim.Loop block while lifting one)
  std::map<const void*, std::string> constant_buffers_;
  std::set<std::string> inlined_notes_;
  std::set<std::string> resolved_notes_;
  std::map<std::tuple<const jit::Graph*, const void*, bool>, std::shared_ptr<jit::Graph>> prepared_;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Loading

const char* kSaveHint = "save with torch.jit.trace(model.eval(), example).save(path)";

// Turns a torch::jit::load failure into a message about the file.
[[noreturn]] void explain_load_failure(const std::string& path, const std::string& what) {
  std::vector<std::string> records;
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    records = reader.getAllRecords();
  } catch (const std::exception& e) {
    throw Error(ExitCode::BadInput,
                "not a readable TorchScript archive (" + first_line(e.what()) +
                    ") — the file may be truncated or corrupt; re-export it: " + kSaveHint);
  }
  bool has_code = false, has_data = false, has_constants = false;
  for (const auto& r : records) {
    if (r.rfind("code/", 0) == 0) has_code = true;
    if (r == "data.pkl") has_data = true;
    if (r == "constants.pkl") has_constants = true;
  }
  if (has_data && !has_code && !has_constants)
    throw Error(ExitCode::BadInput,
                std::string("this is a state_dict/pickled module written by torch.save, not "
                            "TorchScript — ") + kSaveHint);
  throw Error(ExitCode::BadInput,
              "LibTorch cannot load this TorchScript archive (" + first_line(what) +
                  ") — it may come from a newer PyTorch or need a custom op library; re-export it "
                  "with PyTorch 1.13: " + kSaveHint);
}

jit::Module load_module(const std::string& path) {
  try {
    return jit::load(path, c10::Device(c10::kCPU));
  } catch (const c10::Error& e) {
    explain_load_failure(path, e.what_without_backtrace());
  } catch (const std::exception& e) {
    explain_load_failure(path, e.what());
  }
}

}  // namespace

std::unique_ptr<Graph> load_torchscript(const std::string& path, Diagnostics& diags,
                                        std::vector<std::pair<std::string, std::string>>* source_values) {
  try {
    jit::Module module = load_module(path);
    module.eval();
    return Lifter(module, diags, source_values).run();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ExitCode::Unsupported,
                "cannot lift the TorchScript model: " + first_line(e.what_without_backtrace()) +
                    " — please report this with the model");
  } catch (const std::exception& e) {
    throw Error(ExitCode::Unsupported,
                "cannot lift the TorchScript model: " + first_line(e.what()) +
                    " — please report this with the model");
  }
}

std::unique_ptr<Graph> lift_jit_module(const torch::jit::Module& module, Diagnostics& diags,
                                       std::vector<std::pair<std::string, std::string>>* source_values) {
  return Lifter(module, diags, source_values).run();
}

}  // namespace tt
