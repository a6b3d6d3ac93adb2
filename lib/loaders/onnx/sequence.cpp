// Sequences: SequenceEmpty/Construct/Insert/At/Length/Erase, SplitToSequence and
// ConcatFromSequence, as Python lists of tensors.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

// Note [ONNX sequences]
// An ONNX sequence of tensors is a Python list in the IR (what a scripted model's List[Tensor]
// is), built without mutation: SequenceInsert is `seq + [t]` (at a position: `seq[:p] + [t] +
// seq[p:]`, which reads negative positions as ONNX does), SequenceErase `seq[:p] + seq[p + 1:]`
// with p taken modulo len(seq) (ONNX's negative positions), SequenceAt `seq[p]`, SequenceLength
// `len(seq)` (a size: Note [Dynamic shapes]). SplitToSequence is `list(x.split(...))` or
// `list(x.unbind(dim))` (a list, not the tuple torch.split returns, so `+` still works), and
// ConcatFromSequence torch.cat or torch.stack. Lists carried through a Loop are the exporter's
// form of `l.append(x)` in a scripted loop.

Importer::OpList Importer::sequence_ops() {
  return {
      {"SequenceEmpty",
       [](Importer& im, const ox::NodeProto& n) { im.bind(n, 0, im.list_of({})); }},
      {"SequenceConstruct",
       [](Importer& im, const ox::NodeProto& n) {
         std::vector<Value*> xs;
         for (const auto& in : n.input()) xs.push_back(im.tensor_in(in));
         im.bind(n, 0, im.list_of(xs));
       }},
      {"SequenceInsert", [](Importer& im, const ox::NodeProto& n) { im.lift_sequence_insert(n); }},
      {"SequenceErase", [](Importer& im, const ox::NodeProto& n) { im.lift_sequence_erase(n); }},
      {"SequenceAt",
       [](Importer& im, const ox::NodeProto& n) {
         Node* g = im.append("operator.getitem", {im.tensor_in(n.input(0)), im.int_of(n, 1)});
         im.out(g, n);
       }},
      {"SequenceLength",
       [](Importer& im, const ox::NodeProto& n) {
         im.set_sym(n, {im.scalar_op("len", {im.tensor_in(n.input(0))}, Type::Kind::Int)}, true);
       }},
      {"SplitToSequence",
       [](Importer& im, const ox::NodeProto& n) { im.lift_split_to_sequence(n); }},
      {"ConcatFromSequence",
       [](Importer& im, const ox::NodeProto& n) {
         const char* f = im.attr_i(n, "new_axis", 0) ? "torch.stack" : "torch.cat";
         im.call(f, {im.tensor_in(n.input(0)), im.c_int(im.attr_i(n, "axis", 0))}, n);
       }},
  };
}

// seq[start:end] (nullptr: open).
Value* Importer::list_slice(Value* seq, Value* start, Value* end) {
  Node* s = append("list.slice", {seq, start ? start : c_none(), end ? end : c_none(), c_int(1)});
  return s->add_output(Type::list(Type::tensor()));
}

Value* Importer::list_concat(Value* a, Value* b) {
  return append("operator.add", {a, b})->add_output(Type::list(Type::tensor()));
}

void Importer::lift_sequence_insert(const ox::NodeProto& n) {
  Value* seq = tensor_in(n.input(0));
  Value* item = list_of({tensor_in(n.input(1))});
  if (!has_input(n, 2)) return bind(n, 0, list_concat(seq, item));
  Value* p = int_of(n, 2);
  bind(n, 0,
       list_concat(list_concat(list_slice(seq, nullptr, p), item), list_slice(seq, p, nullptr)));
}

void Importer::lift_sequence_erase(const ox::NodeProto& n) {
  Value* seq = tensor_in(n.input(0));
  if (!has_input(n, 1)) return bind(n, 0, list_slice(seq, nullptr, c_int(-1)));
  Value* p = int_of(n, 1);
  if (auto c = int_const(p); !c || *c < 0) {
    Value* len = scalar_op("len", {seq}, Type::Kind::Int);
    p = scalar_op("operator.mod", {p, len}, Type::Kind::Int);
  }
  Value* next = scalar_op("operator.add", {p, c_int(1)}, Type::Kind::Int);
  bind(n, 0, list_concat(list_slice(seq, nullptr, p), list_slice(seq, next, nullptr)));
}

void Importer::lift_split_to_sequence(const ox::NodeProto& n) {
  Value* x = tensor_in(n.input(0));
  int64_t axis = attr_i(n, "axis", 0);
  Value* parts = nullptr;
  Type list = Type::list(Type::tensor());
  if (!has_input(n, 1)) {
    if (attr_i(n, "keepdims", 1))
      parts = append("Tensor.split", {x, c_int(1), c_int(axis)})->add_output(list);
    else
      parts = append("Tensor.unbind", {x, c_int(axis)})->add_output(list);
  } else {
    const at::Tensor* s = const_of(n, 1);
    if (!s && !sym_.count(n.input(1))) unsupported(n, "split sizes computed at run time");
    if (s && s->dim() == 1) {
      parts = append("Tensor.split_with_sizes", {x, c_ints(ints_of(*s)), c_int(axis)})
                  ->add_output(list);
    } else {
      parts = append("Tensor.split", {x, int_of(n, 1), c_int(axis)})->add_output(list);
    }
  }
  call("list", {parts}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
