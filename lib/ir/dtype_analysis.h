// Which values are float tensors: the one dtype analysis of the quantization passes
// (float-functional, quant-stubs, float-fallback), from types, constants, weights and the ops
// that make the values (Note [Float analysis]).
#pragma once

#include "ir/ir.h"

#include <cstdint>
#include <unordered_map>

namespace tt {

// Note [Float analysis]
// Traced and scripted graphs usually carry plain `Tensor` types, so whether a value is a float
// tensor often has to be worked out. The answers, from the cheapest:
// - by the type alone: may_be_float_tensor (a tensor whose dtype is float or unknown: where
//   float-fallback and quant-stubs may put a stub) and float_kind_of_type;
// - by the op that makes the value, without looking further back: known_not_float (a known
//   non-float dtype, or an op whose tensor result is never float: argmax, comparisons, the
//   indices of topk, x.long(); quant-stubs gives outputs a DeQuantStub unless this holds);
// - forward along a walk: FloatAnalysis (float-functional), which records a kind for each
//   node's outputs from its inputs: weights and tensor constants by their dtype, module outputs
//   float, NumToTensor of an int, comparisons and integer aranges not, Tensor.to(dtype) by the
//   dtype, true division float, other ops following their tensor operands.
// The last two read the op facts differently (known_not_float asks the op table's
// kNonFloatResult, FloatAnalysis keeps its own list of comparisons and looks at arange's
// arguments): each keeps the answers its pass has always had.

enum class FloatKind : int8_t { Unknown, Float, NotFloat };

bool is_float_dtype(DType d);  // f32, f64, f16, bf16
// A tensor type whose dtype is float or unknown.
bool may_be_float_tensor(const Type& t);
// NotFloat for a type that is neither Tensor nor Any; for a tensor of known dtype, whether that
// is float; Unknown otherwise.
FloatKind float_kind_of_type(const Type& t);
// Never a float tensor: a known non-float dtype, or (dtype unknown) made by an op whose result
// is never floating point (its own answer, not the walk's), or a complex tensor (known_complex).
bool known_not_float(const Value* v);

// Note [Complex values]
// Eager quantization has no complex tensors: a QuantStub or DeQuantStub on one fails after
// convert (dequantize() of a complex tensor even drops its imaginary part silently), and
// FloatFunctional cannot take one. Traced graphs rarely carry dtypes, so a value is known
// complex by its type (c64, c128) or by the ops that make it: torch.complex, torch.polar,
// view_as_complex, the complex FFTs (fft, ifft, rfft, ihfft and their 2-d/n-d forms),
// linalg.eig(vals), stft/istft(return_complex=True), x.to(a complex dtype), and ops that follow
// their operands (elementwise, views, cat, conj) applied to a complex tensor; real, imag, angle,
// abs, view_as_real, the real FFTs back (irfft, hfft), norms and x.to(a real dtype) give real
// tensors.
//
// The answer walks back through the producers of values of unknown dtype. A caller asking about
// many values passes one ComplexMemo for all of them, so each value is looked at once in total: a
// chain of N ops of unknown dtype costs O(N), not O(N^2) (Note [Scale in graph size] in ir.h).
// The memo holds while the graph's values keep their meaning (rewrites that preserve values).
using ComplexMemo = std::unordered_map<const Value*, bool>;
bool known_complex(const Value* v, ComplexMemo* memo = nullptr);
// Values the walks of known_complex have looked at since the program started (a test's count).
uint64_t& complex_walk_steps();

// Float-ness of tensor values, propagated along a walk in program order: call visit(n) for each
// node before it is rewritten; set() records what a rewrite made.
class FloatAnalysis {
 public:
  explicit FloatAnalysis(const Graph& g) : g_(g) {}

  // The type's answer when it has one, else what the walk recorded (Unknown when nothing).
  FloatKind of(const Value* v) const;
  void set(const Value* v, FloatKind k) { kind_[v] = k; }
  // Records the kinds of n's outputs from its inputs.
  void visit(const Node* n);

 private:
  FloatKind compute(const Node* n) const;

  const Graph& g_;
  std::unordered_map<const Value*, FloatKind> kind_;
  mutable ComplexMemo complex_;
};

}  // namespace tt
