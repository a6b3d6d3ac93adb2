// The op table: ONNX op_type -> the handler that lifts it, one list per op family (each in its own
// file). Importer::lift looks a node's op type up here once Constant, constant folding and dynamic
// shapes have declined the node; an op type in no list is Unsupported ("no PyTorch mapping").
//
// Adding an op: write its lifting next to its family's (or a new family file) and add the
// {op_type, handler} pair to that family's list; a new family's list also goes in `families`
// in op_table() below.
// Each op type belongs to one family: the table refuses to build with a duplicate.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <stdexcept>

namespace tt::onnx_import {

const Importer::OpTable& Importer::op_table() {
  static const OpTable table = [] {
    const OpList families[] = {
        conv_ops(),         matmul_ops(),   norm_ops(),   activation_ops(), elementwise_ops(),
        reduce_ops(),       tensor_ops(),   gather_ops(), resize_ops(),     rnn_ops(),
        control_flow_ops(), sequence_ops(), misc_ops()};
    OpTable t;
    for (const OpList& ops : families)
      for (const auto& [op, handler] : ops)
        if (!t.emplace(op, handler).second)
          throw std::logic_error(std::string("ONNX op ") + op +
                                 " has two handlers in the op table");
    return t;
  }();
  return table;
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
