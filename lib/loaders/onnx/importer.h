// The ONNX importer, private to lib/loaders/onnx/ (and lib/loaders/onnx.cpp, which runs it).
//
// One Importer lifts one ModelProto into a Graph, node by node in file order (Note [Lifting ONNX]
// in lib/loaders/onnx.cpp). Its methods are spread over the folder's files:
//
//   importer.cpp        run() (the whole import), lift() (the per-node dispatch), errors,
//                       attribute readers, TensorProto -> at::Tensor
//   builder.cpp         ONNX values -> IR values: constants, weights, module paths, new nodes
//   ops.cpp             the op table: ONNX op_type -> handler, filled by the families below
//   conv.cpp            Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool/MaxPool
//   matmul.cpp          Gemm, MatMul, Einsum
//   norm.cpp            BatchNormalization, LayerNormalization, InstanceNormalization, LRN
//   activation.cpp      Relu, Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Elu, Gelu, Selu,
//                       Softplus, Clip, PRelu, Softmax, LogSoftmax
//   elementwise.cpp     unary math, Add/Sub/Mul/Div/Pow/Mod, Max/Min/Sum/Mean, comparisons,
//                       logical and bitwise ops, Where, Cast, IsInf, Celu, Quantize/DequantizeLinear
//   reduce.cpp          Reduce*, ArgMax/ArgMin, CumSum, TopK
//   tensor.cpp          Reshape, Flatten, Transpose, (Un)Squeeze, Expand, Concat, Split, Slice,
//                       Tile, DepthToSpace/SpaceToDepth, Trilu, EyeLike, Identity/Dropout (and the Shape/Range/ConstantOfShape
//                       left over once folding and dynamic shapes have had their turn); the
//                       attribute readings folding shares (Slice bounds, axes, perm, ...)
//   gather.cpp          Gather (nn.Embedding), GatherElements/ND, Scatter*, OneHot, NonZero,
//                       Unique
//   resize.cpp          Pad, Resize, Upsample, GridSample, AffineGrid, Col2Im
//   rnn.cpp             LSTM, GRU, RNN (the exporter's wrapper nodes absorbed)
//   control_flow.cpp    the graph walk (nested graphs too), If, Loop, Scan
//   sequence.cpp        Sequence* ops, SplitToSequence, ConcatFromSequence (as lists)
//   misc.cpp            the losses, STFT, and the random ops (refused)
//   fold_constants.cpp  Constant, and folding of nodes whose inputs are all constant (a table
//                       of one small ATen evaluation per foldable op)
//   dynamic_shapes.cpp  shape sub-graphs on run-time sizes as lists of ints (Note [Dynamic shapes])
//   shapes.cpp          static shapes/ranks, and infer-shapes probes of the IR lifted so far
//                       (Note [Shapes ONNX inference leaves open])
//   helpers.cpp         the free functions declared below
//
// The fusions of x*Sigmoid(x), x*HardSigmoid(x) and the erf form of GELU, and the sweep of what
// nothing reads, are not here: they are the ONNX import pipeline's passes (kOnnxImportPipeline in
// lib/loaders/onnx.cpp), run on the lifted graph (Note [Import pipeline] in lib/loaders/loader.h).
#pragma once

#include "loaders/onnx/onnx_proto.h"

#if TT_HAVE_ONNX

#include "loaders/loader.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tt::onnx_import {

namespace ox = ::onnx;

// ---- helpers.cpp ----

[[noreturn]] void bad(const std::string& msg);  // throws Error(BadInput, msg)
std::string read_file(const std::string& path);
std::string dirname_of(const std::string& path);
// ONNX TensorProto data type -> ATen/IR dtype (nullopt / Unknown: a type tinytrace does not read).
std::optional<at::ScalarType> scalar_type(int32_t t);
DType dtype_of(int32_t t);
// State_dict-like name: dots kept, anything else that is not [A-Za-z0-9_] becomes '_'.
std::string dotted_name(const std::string& raw);
// A value name worth keeping: exporter-generated names ("/conv1/Conv_output_0", "onnx::Mul_12")
// are dropped so the emitter derives one from the op or module.
std::string value_hint(const std::string& raw);

class Importer {
 public:
  Importer(ox::ModelProto& model, std::string path, Diagnostics& diags)
      : model_(model), path_(std::move(path)), diags_(diags) {}

  std::unique_ptr<Graph> run();

 private:
  // A lifting: called for a node of the op type it is registered under, once Constant, constant
  // folding and dynamic shapes have declined the node (lift()).
  using Handler = void (*)(Importer&, const ox::NodeProto&);
  using OpList = std::vector<std::pair<const char*, Handler>>;
  using OpTable = std::map<std::string, Handler>;

  // ---- importer.cpp ----

  void lift(const ox::NodeProto& n);
  Type value_type(const ox::ValueInfoProto& vi);
  at::Tensor to_tensor(const ox::TensorProto& t);
  const ox::AttributeProto* attr(const ox::NodeProto& n, const char* name);
  int64_t attr_i(const ox::NodeProto& n, const char* name, int64_t def);
  double attr_f(const ox::NodeProto& n, const char* name, double def);
  static double nice_float(float f);
  std::string attr_s(const ox::NodeProto& n, const char* name, const std::string& def);
  std::optional<std::vector<int64_t>> attr_ints(const ox::NodeProto& n, const char* name);
  std::string where(const ox::NodeProto& n);
  [[noreturn]] void unsupported(const ox::NodeProto& n, const std::string& why);

  // ---- ops.cpp: the op table, merged from each family's list (defined in the family's file) ----

  static const OpTable& op_table();
  static OpList conv_ops();
  static OpList matmul_ops();
  static OpList norm_ops();
  static OpList activation_ops();
  static OpList elementwise_ops();
  static OpList reduce_ops();
  static OpList tensor_ops();
  static OpList gather_ops();
  static OpList resize_ops();
  static OpList rnn_ops();
  static OpList control_flow_ops();
  static OpList sequence_ops();
  static OpList misc_ops();

  // ---- builder.cpp: values ----

  bool has_input(const ox::NodeProto& n, int i);
  bool is_const(const std::string& name);
  const at::Tensor* const_of(const ox::NodeProto& n, int i);
  std::vector<int64_t> ints_of(const at::Tensor& t);
  std::vector<double> doubles_of(const at::Tensor& t);
  Node* append(const std::string& op, const std::vector<Value*>& ins);
  Value* constant(AttrValue v, Type t);
  Value* c_int(int64_t i);
  Value* c_float(double f);
  Value* c_bool(bool b);
  Value* c_str(const std::string& s);
  Value* c_none();
  Value* c_ints(std::vector<int64_t> v);
  Value* c_floats(std::vector<double> v);
  Type type_for(const std::string& name);
  std::string weight_for(const std::string& onnx_name, const at::Tensor& t, bool is_param);
  Value* tensor_in(const std::string& name);
  Value* operand(const ox::NodeProto& n, int i, const std::string& other);
  void bind(const ox::NodeProto& n, int i, Value* v);
  Value* out(Node* node, const ox::NodeProto& n, int i = 0);
  Node* call(const std::string& op, const std::vector<Value*>& ins, const ox::NodeProto& n,
             int i = 0);
  Value* method(const std::string& op, const std::vector<Value*>& ins);
  Value* list_of(const std::vector<Value*>& vs);

  // ---- builder.cpp: module paths ----

  static std::string path_from_node_name(const std::string& node_name);
  std::string module_path(const ox::NodeProto& n, const std::string& weight,
                          const std::string& fallback);
  void module_weight(Node* node, const std::string& key, const at::Tensor& t, bool is_param);
  static std::string scope_parent(const std::string& module);

  // ---- shapes.cpp (Note [Shapes ONNX inference leaves open]) ----

  std::optional<std::vector<int64_t>> static_shape(const std::string& name);
  std::optional<int64_t> rank_of(const std::string& name);
  static constexpr int64_t kProbeDim = 3;  // a dynamic dim's size in a rank-only probe
  bool inputs_static() const;
  bool probe_shapes();
  std::optional<std::vector<int64_t>> known_shape(const std::string& name);
  std::optional<int64_t> known_rank(const std::string& name);

  // ---- fold_constants.cpp (Note [Folding ONNX constants]) ----

  // A fold: the value of an op from its constant inputs (undefined: declined).
  using Fold = at::Tensor (*)(Importer&, const ox::NodeProto&, const std::vector<at::Tensor>&);
  static const std::map<std::string, Fold>& fold_table();
  void lift_constant(const ox::NodeProto& n);
  bool fold_shape(const ox::NodeProto& n);
  bool try_fold(const ox::NodeProto& n);
  bool fold_ahead(const std::string& name, int depth = 0);
  const at::Tensor* const_ahead(const ox::NodeProto& n, int i);

  // ---- dynamic_shapes.cpp (Note [Dynamic shapes]) ----

  Value* size_of(const std::string& name, int64_t dim);
  Value* materialize(const std::string& name);
  Value* scalar_op(const std::string& op, const std::vector<Value*>& ins, Type::Kind kind);
  std::optional<std::vector<Value*>> sym_elems(const ox::NodeProto& n, int i);
  bool is_sym(const ox::NodeProto& n, int i);
  std::optional<int64_t> int_const(Value* v);
  Value* int_list(const std::vector<Value*>& elems);
  void set_sym(const ox::NodeProto& n, std::vector<Value*> elems, bool scalar);
  bool try_symbolic(const ox::NodeProto& n);
  std::optional<std::vector<int64_t>> const_axes(const ox::NodeProto& n);

  // ---- conv.cpp ----

  // Begin/end padding per spatial dim (spatial_pads).
  struct Pads {
    std::vector<int64_t> begin, end;
  };
  Pads spatial_pads(const ox::NodeProto& n, size_t dims, const std::vector<int64_t>& kernel,
                    const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation);
  Value* pad_excess(Value* x, const Pads& p, double value, std::vector<int64_t>& padding);
  Pads transposed_pads(const ox::NodeProto& n, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation,
                       const std::vector<int64_t>& output_padding);
  Value* crop_excess(Value* y, const Pads& p, const std::vector<int64_t>& padding);
  void lift_conv(const ox::NodeProto& n, bool transposed);
  void lift_pool(const ox::NodeProto& n, bool max);
  void lift_pool_indices(const ox::NodeProto& n, const std::vector<Value*>& ins);
  // What an ONNX MaxPool indices value is in PyTorch's terms (Note [MaxPool indices]):
  // local + the plane offsets of `input` (local nullptr: the offsets alone, or with `positions`
  // every position's own index, a 1x1 pooling's indices).
  struct PoolIndices {
    Value* local;
    std::string input;
    bool positions;
  };
  std::unordered_map<std::string, PoolIndices> pool_indices_;
  void lift_global_pool(const ox::NodeProto& n, bool max);

  // ---- matmul.cpp ----

  Value* linear(const ox::NodeProto& n, Value* x, const std::string& weight_name,
                const at::Tensor& w, const at::Tensor* bias);
  void lift_gemm(const ox::NodeProto& n);
  void lift_matmul(const ox::NodeProto& n);
  void lift_einsum(const ox::NodeProto& n);

  // ---- norm.cpp ----

  void lift_batch_norm(const ox::NodeProto& n);
  void lift_layer_norm(const ox::NodeProto& n);
  void lift_instance_norm(const ox::NodeProto& n);
  void lift_lrn(const ox::NodeProto& n);

  // ---- activation.cpp ----

  void lift_hard_sigmoid(const ox::NodeProto& n);
  void lift_clip(const ox::NodeProto& n);
  void lift_selu(const ox::NodeProto& n);
  void lift_shrink(const ox::NodeProto& n);
  void lift_prelu(const ox::NodeProto& n);
  void lift_softmax(const ox::NodeProto& n, bool log);

  // ---- elementwise.cpp ----

  void lift_unary(const ox::NodeProto& n);
  void lift_mul(const ox::NodeProto& n);
  void lift_binary(const ox::NodeProto& n);
  DType dtype_known(const std::string& name);
  void lift_variadic(const ox::NodeProto& n);
  void lift_isinf(const ox::NodeProto& n);
  void lift_quantize(const ox::NodeProto& n, bool quantize);
  void lift_compare(const ox::NodeProto& n);
  void lift_where(const ox::NodeProto& n);
  void lift_mod(const ox::NodeProto& n);
  void lift_cast(const ox::NodeProto& n);

  // ---- reduce.cpp ----

  void lift_reduce(const ox::NodeProto& n);
  void lift_arg_max_min(const ox::NodeProto& n);
  void lift_cumsum(const ox::NodeProto& n);
  void lift_topk(const ox::NodeProto& n);

  // ---- tensor.cpp ----

  void lift_identity(const ox::NodeProto& n);
  void lift_expand_static(const ox::NodeProto& n);
  void lift_tile(const ox::NodeProto& n);
  void lift_depth_to_space(const ox::NodeProto& n);
  void lift_expand(const ox::NodeProto& n, std::vector<Value*> shape);
  void lift_flatten(const ox::NodeProto& n);
  void lift_reshape(const ox::NodeProto& n);
  void lift_transpose(const ox::NodeProto& n);
  void lift_concat(const ox::NodeProto& n);
  void lift_split(const ox::NodeProto& n);
  void lift_slice(const ox::NodeProto& n);
  void lift_slice_sym(const ox::NodeProto& n);
  void lift_squeeze(const ox::NodeProto& n, bool unsqueeze);
  void lift_eye_like(const ox::NodeProto& n);
  // What the liftings above and constant folding both read (one reading each).
  struct SliceBounds {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  std::optional<SliceBounds> slice_bounds(const ox::NodeProto& n);
  std::optional<std::vector<int64_t>> squeeze_axes(const ox::NodeProto& n);
  static bool sort_axes(std::vector<int64_t>& axes, std::optional<int64_t> rank, bool unsqueeze);
  std::optional<std::vector<int64_t>> transpose_perm(const ox::NodeProto& n,
                                                     std::optional<int64_t> rank);
  std::pair<int64_t, int64_t> shape_range(const ox::NodeProto& n, int64_t rank);
  at::Tensor fill_value(const ox::NodeProto& n);

  // ---- gather.cpp ----

  void lift_gather(const ox::NodeProto& n);
  void lift_embedding(const ox::NodeProto& n, const at::Tensor& table);
  void lift_gather_elements(const ox::NodeProto& n);
  Value* const_indices(const ox::NodeProto& n, int i, int64_t axis);
  std::vector<Value*> index_tuple(const ox::NodeProto& n, int i);
  void lift_gather_nd(const ox::NodeProto& n);
  void lift_scatter_nd(const ox::NodeProto& n);
  void lift_scatter_elements(const ox::NodeProto& n);
  void lift_one_hot(const ox::NodeProto& n);
  void lift_unique(const ox::NodeProto& n);

  // ---- resize.cpp ----

  void lift_pad(const ox::NodeProto& n);
  void lift_resize(const ox::NodeProto& n,
                   std::optional<std::vector<Value*>> sym_sizes = std::nullopt);
  void lift_grid_sample(const ox::NodeProto& n);
  void lift_col2im(const ox::NodeProto& n);

  // ---- rnn.cpp (Note [ONNX LSTM/GRU]) ----

  int sole_consumer(const std::string& name);
  bool is_zero_const(const std::string& name);
  bool ir_zeros(const std::string& name);
  static at::Tensor reorder_gates(const at::Tensor& t, bool lstm);
  void lift_rnn(const ox::NodeProto& n0);

  // ---- control_flow.cpp (Note [ONNX control flow]) ----

  const ox::GraphProto& graph() const { return *graph_; }
  void index_graph(const ox::GraphProto& g);
  void lift_nodes(const ox::GraphProto& g);
  void lift_subgraph(const ox::GraphProto& g, Block* b, const std::function<void()>& start,
                     const std::function<void()>& finish);
  const ox::GraphProto& subgraph(const ox::NodeProto& n, const char* name);
  Value* condition_of(const ox::NodeProto& n, int i);
  Value* int_of(const ox::NodeProto& n, int i);
  Node* append_control(const std::string& op, const std::vector<Value*>& ins);
  void lift_if(const ox::NodeProto& n);
  void lift_loop(const ox::NodeProto& n);
  void lift_scan(const ox::NodeProto& n);
  void loop_body_outputs(Block* b, Value* cond, const ox::GraphProto& body, int first, int carried,
                         const std::vector<Value*>& lists);
  void bind_loop_results(const ox::NodeProto& n, Node* loop, int carried,
                         const std::vector<int64_t>& axes, const std::vector<int64_t>& reverse);

  // ---- sequence.cpp (Note [ONNX sequences]) ----

  Value* list_slice(Value* seq, Value* start, Value* end);
  Value* list_concat(Value* a, Value* b);
  void lift_sequence_insert(const ox::NodeProto& n);
  void lift_sequence_erase(const ox::NodeProto& n);
  void lift_split_to_sequence(const ox::NodeProto& n);

  // ---- misc.cpp ----

  void lift_loss(const ox::NodeProto& n);
  void lift_stft(const ox::NodeProto& n);

  // ---- state ----

  ox::ModelProto& model_;
  std::string path_;
  Diagnostics& diags_;
  std::unique_ptr<Graph> g_;
  // Where lifting is (Note [ONNX control flow]): the ONNX graph whose nodes are lifted (the
  // model's, or a branch/body), the IR block they go to, and the outermost prim.If/prim.Loop
  // being filled (constants read anywhere are materialised before it, so every block sees them).
  const ox::GraphProto* graph_ = nullptr;
  Block* block_ = nullptr;
  Node* hoist_ = nullptr;
  bool hoisting_ = false;
  int64_t opset_ = 0;
  int node_index_ = 0;
  std::string scope_;
  std::unordered_map<std::string, Value*> env_;
  std::unordered_map<std::string, at::Tensor> consts_;
  std::set<std::string> init_names_;
  std::unordered_map<std::string, Type> types_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<Value*>> sym_;  // Note [Dynamic shapes]
  std::set<std::string> sym_scalar_;
  // Tensors computed from sizes made tensors (Note [Dynamic shapes]), and those tensors per
  // block they were made in.
  std::set<std::string> from_sym_;
  std::map<std::pair<std::string, const Block*>, Value*> materialized_;
  std::set<int> skip_;
  std::unordered_map<std::string, std::string> weight_names_;
  std::unordered_map<std::string, std::string> module_of_weight_;
  std::set<std::string> used_modules_;
  std::vector<Value*> outputs_;
  int bn_count_ = 0;
  // The IR at the last shape probe (Note [Shapes ONNX inference leaves open]).
  Node* probed_last_ = nullptr;
  size_t probed_count_ = 0;
  int probes_ = 0;
};

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
