// The float analysis of the quantization passes (Note [Float analysis] in
// lib/ir/dtype_analysis.h).
#include "ir/dtype_analysis.h"

#include "ir/match.h"
#include "ir/op_table.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <set>

namespace tt {

bool is_float_dtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16;
}

bool may_be_float_tensor(const Type& t) {
  return t.is_tensor() && (t.dtype == DType::Unknown || is_float_dtype(t.dtype));
}

FloatKind float_kind_of_type(const Type& t) {
  if (t.kind != Type::Kind::Tensor && t.kind != Type::Kind::Any) return FloatKind::NotFloat;
  if (t.is_tensor() && t.dtype != DType::Unknown)
    return is_float_dtype(t.dtype) ? FloatKind::Float : FloatKind::NotFloat;
  return FloatKind::Unknown;
}

namespace {

// A tensor result that is never floating point, known without shapes: results of ops that only
// make integers or bools (argmax, comparisons, ...), the indices of topk/sort/max(dim)/...,
// and conversions to an integer dtype (x.long(), x.to(torch.int64), x.type_as(int_tensor)).
bool makes_non_float(const Value* v) {
  const Node* p = v->node();
  for (const auto& b : aten_bases(p->op())) {
    if (aten_base_has(b, kNonFloatResult)) return true;
    if (aten_base_has(b, kIndicesSecond) && p->num_outputs() == 2 && v == p->output(1)) return true;
    if (b == "aten::to" || b == "aten::type_as") {
      for (const Value* in : p->inputs()) {
        if (in->type().kind == Type::Kind::ScalarType) {  // x.to(dtype)
          const AttrValue* c = in->constant();
          const DType* d = c ? std::get_if<DType>(c) : nullptr;
          return d && !is_float_dtype(*d) && *d != DType::Unknown;
        }
      }
      if (b == "aten::type_as" && p->num_inputs() == 2)  // the dtype of `other`
        return known_not_float(p->input(1));
    }
  }
  return false;
}

}  // namespace

bool known_not_float(const Value* v) {
  const Type& t = v->type();
  return t.dtype != DType::Unknown ? !is_float_dtype(t.dtype)
                                   : makes_non_float(v) || known_complex(v);
}

namespace {

bool complex_by_producer_uncached(const Value* v, ComplexMemo& seen);

// Note [Complex values]: by the op that makes the value, looking back through the operands
// of ops that follow them (each value once: `seen` holds the answers so far; a value being looked
// at reads as false, which only a cycle could ask, and SSA values have none).
bool complex_by_producer(const Value* v, ComplexMemo& seen) {
  auto [it, first] = seen.emplace(v, false);
  if (!first) return it->second;
  ++complex_walk_steps();
  bool r = complex_by_producer_uncached(v, seen);
  seen[v] = r;  // `it` may be invalid: the walk inserted more
  return r;
}

bool complex_by_producer_uncached(const Value* v, ComplexMemo& seen) {
  const Type& t = v->type();
  if (t.dtype != DType::Unknown) return t.dtype == DType::C64 || t.dtype == DType::C128;
  if (!t.is_tensor() && t.kind != Type::Kind::Any && t.kind != Type::Kind::List &&
      t.kind != Type::Kind::Tuple)
    return false;
  const Node* p = v->node();
  if (p->owning_block() == nullptr || p == p->owning_block()->param_node())
    return false;  // a graph or block input of unknown dtype
  const std::string& op = p->op();
  if (op == "prim.ListUnpack" || op == "prim.TupleUnpack" || op == "prim.TupleIndex" ||
      op == "operator.getitem" || op == "prim.ListConstruct" || op == "prim.TupleConstruct") {
    for (const Value* in : p->inputs())
      if (complex_by_producer(in, seen)) return true;
    return false;
  }
  if (op.rfind("prim.", 0) == 0 || is_module_op(p)) return false;
  static const std::set<std::string> makes_complex = {
      "aten::complex",       "aten::polar",     "aten::view_as_complex", "aten::fft_fft",
      "aten::fft_ifft",      "aten::fft_rfft",  "aten::fft_ihfft",       "aten::fft_fft2",
      "aten::fft_ifft2",     "aten::fft_rfft2", "aten::fft_ihfft2",      "aten::fft_fftn",
      "aten::fft_ifftn",     "aten::fft_rfftn", "aten::fft_ihfftn",      "aten::linalg_eig",
      "aten::linalg_eigvals"};
  static const std::set<std::string> makes_real = {"aten::real",
                                                   "aten::imag",
                                                   "aten::angle",
                                                   "aten::abs",
                                                   "aten::absolute",
                                                   "aten::view_as_real",
                                                   "aten::fft_irfft",
                                                   "aten::fft_hfft",
                                                   "aten::fft_irfft2",
                                                   "aten::fft_hfft2",
                                                   "aten::fft_irfftn",
                                                   "aten::fft_hfftn",
                                                   "aten::linalg_norm",
                                                   "aten::linalg_vector_norm",
                                                   "aten::linalg_matrix_norm",
                                                   "aten::norm",
                                                   "aten::size",
                                                   "aten::numel"};
  for (const std::string& b : aten_bases(op)) {
    if (makes_complex.count(b)) return true;
    if (makes_real.count(b)) return false;
    if (b == "aten::stft" || b == "aten::istft") {  // return_complex is the last input
      auto c = p->num_inputs() ? const_bool(p->inputs().back()) : std::nullopt;
      return c && *c;
    }
    if (b == "aten::to") {  // x.to(dtype): complex iff that dtype is
      for (const Value* in : p->inputs())
        if (in->type().kind == Type::Kind::ScalarType) {
          auto d = const_dtype(in);
          return d && (*d == DType::C64 || *d == DType::C128);
        }
    }
    if (b == "aten::type_as" && p->num_inputs() == 2) return complex_by_producer(p->input(1), seen);
  }
  if (makes_non_float(v)) return false;
  for (const Value* in : p->inputs())
    if (complex_by_producer(in, seen)) return true;
  return false;
}

}  // namespace

bool known_complex(const Value* v, ComplexMemo* memo) {
  if (memo) return complex_by_producer(v, *memo);
  ComplexMemo seen;
  return complex_by_producer(v, seen);
}

uint64_t& complex_walk_steps() {
  static uint64_t n = 0;
  return n;
}

// ---------------------------------------------------------------------------------------------

FloatKind FloatAnalysis::of(const Value* v) const {
  FloatKind k = float_kind_of_type(v->type());
  if (k != FloatKind::Unknown) return k;
  auto it = kind_.find(v);
  return it == kind_.end() ? FloatKind::Unknown : it->second;
}

void FloatAnalysis::visit(const Node* n) {
  if (n->num_outputs() == 0) return;
  FloatKind k = compute(n);
  for (const Value* o : n->outputs())
    if (k != FloatKind::Unknown) kind_[o] = k;
}

FloatKind FloatAnalysis::compute(const Node* n) const {
  using FK = FloatKind;
  const std::string& op = n->op();
  if (op.rfind("prim.", 0) != 0 && known_complex(n->output(0), &complex_)) return FK::NotFloat;
  if (op == "prim.Constant") {
    const AttrValue* a = n->output()->constant();
    if (const auto* t = a ? std::get_if<at::Tensor>(a) : nullptr)
      return t->defined() && t->is_floating_point() ? FK::Float : FK::NotFloat;
    return FK::NotFloat;
  }
  if (op == "prim.GetAttr") {
    const Weight* w = g_.weights().find(n->weight("value"));
    if (!w || !w->tensor.defined()) return FK::Unknown;
    return w->tensor.is_floating_point() ? FK::Float : FK::NotFloat;
  }
  if (op == "prim.NumToTensor") {
    Type::Kind k = n->input(0)->type().kind;
    return k == Type::Kind::Float ? FK::Float : k == Type::Kind::Any ? FK::Unknown : FK::NotFloat;
  }
  if (op.rfind("prim.", 0) == 0) return FK::Unknown;
  if (is_module_op(n)) return n->num_outputs() == 1 ? FK::Float : FK::Unknown;
  for (const char* cmp :
       {"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge", "aten::logical_not",
        "aten::logical_and", "aten::logical_or", "aten::isnan", "aten::argmax", "aten::argmin"})
    if (calls_aten(n, cmp)) return FK::NotFloat;
  if (calls_aten(n, "aten::to") && n->num_inputs() > 1) {
    if (auto d = const_dtype(n->input(1))) return is_float_dtype(*d) ? FK::Float : FK::NotFloat;
    if (n->input(1)->type().kind == Type::Kind::Tensor) return of(n->input(1));
    return FK::Unknown;
  }
  if (calls_aten(n, "aten::type_as") && n->num_inputs() == 2) return of(n->input(1));
  // arange(start, end, step, dtype, ...): int64 unless a dtype or a float bound says float.
  if (calls_aten(n, "aten::arange")) {
    if (n->num_inputs() > 3)
      if (auto d = const_dtype(n->input(3))) return is_float_dtype(*d) ? FK::Float : FK::NotFloat;
    for (size_t i = 0; i < std::min<size_t>(3, n->num_inputs()); ++i)
      if (n->input(i)->type().kind == Type::Kind::Float) return FK::Float;
    return FK::NotFloat;
  }
  if (calls_aten(n, "aten::div"))
    return FK::Float;  // true division; floor/trunc modes too
                       // keep float inputs float
  // Elementwise and shape ops follow their tensor operands (type promotion: any float operand
  // makes the result float; a float number does too for arithmetic).
  bool any_unknown = false, any_tensor = false, float_number = false;
  for (const Value* v : n->inputs()) {
    Type::Kind k = v->type().kind;
    if (k == Type::Kind::Float) float_number = true;
    if (k != Type::Kind::Tensor && k != Type::Kind::Any) continue;
    any_tensor = true;
    FK f = of(v);
    if (f == FK::Float) return FK::Float;
    if (f == FK::Unknown) any_unknown = true;
  }
  if (!any_tensor || any_unknown) return FK::Unknown;
  bool arith = calls_aten(n, "aten::add") || calls_aten(n, "aten::sub") ||
               calls_aten(n, "aten::mul") || calls_aten(n, "aten::rsub");
  return arith && float_number ? FK::Float : FK::NotFloat;
}

}  // namespace tt
