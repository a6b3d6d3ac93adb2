// Activation patterns the exporter writes as several ONNX nodes, lifted as the one PyTorch
// function: x*Sigmoid(x) -> F.silu, x*HardSigmoid(x) -> F.hardswish, the erf form of GELU ->
// F.gelu (lift_mul, elementwise.cpp, asks first).
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <cmath>

namespace tt::onnx_import {

// Producer of `v` when it is `op` and `v` has no other use (so it can be replaced).
Node* Importer::sole_producer(Value* v, const char* op) {
  Node* p = v->node();
  if (!p || !p->is(op) || v->num_uses() != 0) return nullptr;
  return p;
}

// x * sigmoid(x) -> F.silu, x * hardsigmoid(x) -> F.hardswish: the Mul `n` of the lifted values
// a and b (neither a constant), when the gate feeds this Mul only. The gate's node, then unused,
// goes in the sweep (cleanup.cpp). True when `n` was lifted.
bool Importer::fuse_gated_activation(const ox::NodeProto& n, Value* a, Value* b) {
  for (int k = 0; k < 2; ++k) {
    Value* x = k ? b : a;
    Value* y = k ? a : b;
    if (consumers_[n.input(k ? 0 : 1)].size() != 1) continue;
    // x * sigmoid(x) -> silu, x * hardsigmoid(x) -> hardswish
    if (Node* p = sole_producer(y, "torch.sigmoid"); p && p->input(0) == x) {
      call("F.silu", {x}, n);
      return true;
    }
    if (Node* p = sole_producer(y, "F.hardsigmoid"); p && p->input(0) == x) {
      call("F.hardswish", {x}, n);
      return true;
    }
  }
  return false;
}

// GELU, erf form: ((x * (erf(x / sqrt(2)) + 1)) * 0.5, the Mul `n` by 0.5 being the last node.
// The torch.div/erf/add/mul nodes lifted for it, then unused, go in the sweep (cleanup.cpp). True
// when `n` was lifted.
bool Importer::fuse_erf_gelu(const ox::NodeProto& n) {
  const at::Tensor* half = const_of(n, 1);
  if (half && half->numel() == 1 && std::abs(half->item<double>() - 0.5) < 1e-7 && !is_const(n.input(0)) &&
      consumers_[n.input(0)].size() == 1) {
    Value* p = tensor_in(n.input(0));
    Node* m = sole_producer(p, "torch.mul");
    if (m && m->num_inputs() == 2) {
      for (int k = 0; k < 2; ++k) {
        Value* x = m->input(static_cast<size_t>(k));
        Value* q = m->input(static_cast<size_t>(1 - k));
        if (q->num_uses() != 1) continue;
        Node* add = q->node();
        if (!add->is("torch.add") || add->num_inputs() < 2 || !add->input(1)->constant()) continue;
        const AttrValue* one = add->input(1)->constant();
        if (!std::holds_alternative<double>(*one) || std::get<double>(*one) != 1.0) continue;
        Node* erf = add->input(0)->node();
        if (!erf->is("torch.erf") || add->input(0)->num_uses() != 1) continue;
        Node* div = erf->input(0)->node();
        if (!div->is("torch.div") || div->input(0) != x || erf->input(0)->num_uses() != 1) continue;
        const AttrValue* s = div->input(1)->constant();
        if (!s || !std::holds_alternative<double>(*s) || std::abs(std::get<double>(*s) - std::sqrt(2.0)) > 1e-5)
          continue;
        call("F.gelu", {x, c_str("none")}, n);
        return true;
      }
    }
  }
  return false;
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
