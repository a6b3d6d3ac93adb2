// The graph walk (the model's graph and the graphs nested in If/Loop/Scan nodes) and control flow:
// If, Loop and Scan as prim.If / prim.Loop.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <limits>

namespace tt::onnx_import {

// Note [ONNX control flow]
// If, Loop and Scan become the prim.If / prim.Loop blocks the TorchScript loader makes for
// scripted models (Note [Lifting control flow] in lib/loaders/torchscript/lifter_control.cpp),
// so the Python emitter writes `if`/`for`/`while`:
// - If(cond) { then_branch } { else_branch } -> prim.If(bool(cond)) with one block per branch;
//   a condition that folds to a constant keeps only the taken branch, lifted in place (a
//   `branch-resolved` note).
// - Loop(M, cond, v...) body(i, cond_in, v...) -> (cond_out, v..., scan...) -> prim.Loop(int(M)
//   or INT64_MAX when M is absent, bool(cond) or True, v..., [] per scan output) with the block
//   (i, v..., lists...) -> (bool(cond_out), v..., list + [scan]...); after it each list is
//   torch.stack'ed (the scan outputs stack the per-iteration values along a new dim 0).
//   The body's cond_in is True whenever the body runs, so it is the constant True; the
//   iteration number is an int (a size: Note [Dynamic shapes]), so `xs[i]` stays `xs[i]`.
// - Scan(states..., xs...) body(states..., x_t...) -> (states..., y_t...) -> a prim.Loop over
//   the scan axis's length, x_t = xs.select(axis, t) (t counted from the end for reverse
//   directions), the y_t stacked along their scan_output_axes (flipped for reverse).
// ONNX graphs nested in a node read values of the enclosing graphs by name (implicit inputs).
// Names are unique across the model, so one env_ serves every graph; what is per graph (the
// node list, consumers, producers, skipped nodes) is saved and restored around a nested graph
// (lift_subgraph), and a node's consumers include those of values its nested graphs read
// (index_graph), so a look-ahead never absorbs a value a branch still reads. Constants read
// inside a block are materialised before the outermost prim.If/prim.Loop (hoist_), so the IR
// value is defined for every later reader, in or out of the block.

Importer::OpList Importer::control_flow_ops() {
  return {
      {"If", [](Importer& im, const ox::NodeProto& n) { im.lift_if(n); }},
      {"Loop", [](Importer& im, const ox::NodeProto& n) { im.lift_loop(n); }},
      {"Scan", [](Importer& im, const ox::NodeProto& n) { im.lift_scan(n); }},
  };
}

namespace {

// The names a node's nested graphs read from enclosing graphs (recursively).
void outer_reads(const ox::NodeProto& n, std::set<std::string>& out);

void graph_outer_reads(const ox::GraphProto& g, std::set<std::string>& out) {
  std::set<std::string> defined, read;
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) read.insert(i);
    outer_reads(n, read);
    for (const auto& o : n.output()) defined.insert(o);
  }
  for (const auto& o : g.output()) read.insert(o.name());
  for (const auto& r : read)
    if (!r.empty() && !defined.count(r)) out.insert(r);
}

void outer_reads(const ox::NodeProto& n, std::set<std::string>& out) {
  for (const auto& a : n.attribute()) {
    if (a.has_g()) graph_outer_reads(a.g(), out);
    for (const auto& g : a.graphs()) graph_outer_reads(g, out);
  }
}

}  // namespace

// Types, initializers, consumers and producers of one graph's values.
void Importer::index_graph(const ox::GraphProto& g) {
  for (const auto& vi : g.value_info()) types_[vi.name()] = value_type(vi);
  for (const auto& vi : g.output()) types_[vi.name()] = value_type(vi);
  if (&g != &model_.graph())
    for (const auto& vi : g.input()) types_[vi.name()] = value_type(vi);
  for (const auto& t : g.initializer()) {
    consts_[t.name()] = to_tensor(t);
    init_names_.insert(t.name());
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const ox::NodeProto& n = g.node(i);
    std::set<std::string> reads(n.input().begin(), n.input().end());
    outer_reads(n, reads);
    for (const auto& in : reads)
      if (!in.empty()) consumers_[in].push_back(i);
    for (const auto& o : n.output()) producer_[o] = i;
  }
  for (const auto& o : g.output()) consumers_[o.name()].push_back(-1);
}

void Importer::lift_nodes(const ox::GraphProto& g) {
  for (int i = 0; i < g.node_size(); ++i) {
    if (skip_.count(i)) continue;
    node_index_ = i;
    lift(g.node(i));
  }
}

// Lifts the nodes of `g` into `b` (the caller has bound g's inputs, or binds them in `start`);
// `start` runs before g's nodes, `finish` after them (to add the block's outputs), both with g
// as the current graph and b as the current block.
void Importer::lift_subgraph(const ox::GraphProto& g, Block* b, const std::function<void()>& start,
                             const std::function<void()>& finish) {
  const ox::GraphProto* graph = graph_;
  Block* block = block_;
  int index = node_index_;
  std::string scope = scope_;
  auto consumers = std::move(consumers_);
  auto producer = std::move(producer_);
  auto skip = std::move(skip_);
  consumers_.clear();
  producer_.clear();
  skip_.clear();
  graph_ = &g;
  block_ = b;
  index_graph(g);
  start();
  lift_nodes(g);
  finish();
  graph_ = graph;
  block_ = block;
  node_index_ = index;
  scope_ = scope;
  consumers_ = std::move(consumers);
  producer_ = std::move(producer);
  skip_ = std::move(skip);
}

const ox::GraphProto& Importer::subgraph(const ox::NodeProto& n, const char* name) {
  const auto* a = attr(n, name);
  if (!a || !a->has_g())
    bad("ONNX op " + n.op_type() + " (" + where(n) + ") has no " + name +
        " graph — the file is malformed; re-export it");
  return a->g();
}

// Input i as a Python bool: a constant, a bool size computation, or bool(t) of a one-element
// tensor.
Value* Importer::condition_of(const ox::NodeProto& n, int i) {
  if (const at::Tensor* c = const_of(n, i)) {
    if (c->numel() != 1)
      unsupported(
          n, "a condition with " + std::to_string(c->numel()) + " elements (it must hold one)");
    return c_bool(c->item<bool>());
  }
  auto s = sym_.find(n.input(i));
  if (s != sym_.end() && s->second.size() == 1) {
    Value* v = s->second[0];
    return v->type().kind == Type::Kind::Bool ? v : scalar_op("bool", {v}, Type::Kind::Bool);
  }
  return scalar_op("bool", {tensor_in(n.input(i))}, Type::Kind::Bool);
}

// Input i as a Python int: a constant, a size, or int(t) of a one-element tensor.
Value* Importer::int_of(const ox::NodeProto& n, int i) {
  if (const at::Tensor* c = const_of(n, i)) {
    if (c->numel() != 1)
      unsupported(n, "a count with " + std::to_string(c->numel()) + " elements (it must hold one)");
    return c_int(c->item<int64_t>());
  }
  auto s = sym_.find(n.input(i));
  if (s != sym_.end() && s->second.size() == 1 && s->second[0]->type().kind == Type::Kind::Int)
    return s->second[0];
  return scalar_op("int", {tensor_in(n.input(i))}, Type::Kind::Int);
}

// Appends a prim.If/prim.Loop; the outermost one receives the constants its blocks read.
Node* Importer::append_control(const std::string& op, const std::vector<Value*>& ins) {
  Node* node = append(op, ins);
  if (!hoist_) hoist_ = node;
  return node;
}

void Importer::lift_if(const ox::NodeProto& n) {
  const ox::GraphProto& then_g = subgraph(n, "then_branch");
  const ox::GraphProto& else_g = subgraph(n, "else_branch");
  for (const auto* g : {&then_g, &else_g})
    if (g->output_size() != n.output_size())
      bad("ONNX op If (" + where(n) + "): a branch has " + std::to_string(g->output_size()) +
          " outputs, the node " + std::to_string(n.output_size()) + " — re-export the model");
  if (const at::Tensor* c = const_of(n, 0); c && c->numel() == 1) {
    // A constant condition: the taken branch, in place.
    bool taken = c->item<bool>();
    const ox::GraphProto& g = taken ? then_g : else_g;
    lift_subgraph(
        g, block_, [] {},
        [&] {
          for (int i = 0; i < n.output_size(); ++i) {
            const std::string& o = g.output(i).name();
            if (consts_.count(o))
              consts_[n.output(i)] = consts_[o];
            else if (sym_.count(o)) {
              sym_[n.output(i)] = sym_[o];
              if (sym_scalar_.count(o)) sym_scalar_.insert(n.output(i));
            } else {
              bind(n, i, tensor_in(o));
            }
          }
        });
    diags_.add({Severity::Note, "branch-resolved",
                std::string("the condition of ONNX If ") + where(n) + " is the constant " +
                    (taken ? "True" : "False") + ": only the " + (taken ? "then" : "else") +
                    " branch was kept",
                "", scope_, ""});
    return;
  }
  Value* cond = condition_of(n, 0);
  Node* node = append_control("prim.If", {cond});
  for (int i = 0; i < n.output_size(); ++i)
    node->add_output(type_for(n.output(i)), value_hint(n.output(i)));
  for (const auto* g : {&then_g, &else_g}) {
    Block* b = node->add_block();
    lift_subgraph(
        *g, b, [] {},
        [&] {
          for (const auto& o : g->output()) b->add_output(tensor_in(o.name()));
        });
  }
  if (hoist_ == node) hoist_ = nullptr;
  for (int i = 0; i < n.output_size(); ++i) bind(n, i, node->output(static_cast<size_t>(i)));
}

void Importer::lift_loop(const ox::NodeProto& n) {
  const ox::GraphProto& body = subgraph(n, "body");
  int carried = n.input_size() - 2;
  int scans = body.output_size() - 1 - carried;
  if (carried < 0 || scans < 0 || body.input_size() != carried + 2 ||
      n.output_size() > carried + scans)
    bad("ONNX op Loop (" + where(n) +
        "): its inputs, outputs and body do not agree — re-export "
        "the model");
  Value* trips = has_input(n, 0) ? int_of(n, 0) : c_int(std::numeric_limits<int64_t>::max());
  Value* cond = has_input(n, 1) ? condition_of(n, 1) : c_bool(true);
  std::vector<Value*> ins = {trips, cond};
  for (int k = 0; k < carried; ++k) ins.push_back(tensor_in(n.input(2 + k)));
  for (int k = 0; k < scans; ++k) ins.push_back(list_of({}));
  Node* loop = append_control("prim.Loop", ins);
  for (int k = 0; k < carried; ++k)
    loop->add_output(type_for(body.input(2 + k).name()), value_hint(n.input(2 + k)));
  for (int k = 0; k < scans; ++k) loop->add_output(Type::list(Type::tensor()));
  Block* b = loop->add_block();
  // The iteration number is an int (a size), the incoming condition True (the body runs only
  // then), the carried values block arguments.
  Value* iter = b->add_input(Type::of(Type::Kind::Int), "i");
  const std::string& iter_name = body.input(0).name();
  sym_[iter_name] = {iter};
  sym_scalar_.insert(iter_name);
  consts_[body.input(1).name()] = at::scalar_tensor(true, at::kBool);
  for (int k = 0; k < carried; ++k) {
    const std::string& name = body.input(2 + k).name();
    env_[name] = b->add_input(value_type(body.input(2 + k)), value_hint(name));
  }
  std::vector<Value*> lists;
  for (int k = 0; k < scans; ++k) lists.push_back(b->add_input(Type::list(Type::tensor()), "ys"));
  lift_subgraph(
      body, b, [] {},
      [&] {
        ox::NodeProto ret;  // the body's outputs, read as a node's inputs
        for (const auto& o : body.output()) ret.add_input(o.name());
        loop_body_outputs(b, condition_of(ret, 0), body, 1, carried, lists);
      });
  if (hoist_ == loop) hoist_ = nullptr;
  bind_loop_results(n, loop, carried, std::vector<int64_t>(static_cast<size_t>(scans), 0),
                    std::vector<int64_t>(static_cast<size_t>(scans), 0));
}

// The end of a loop body: the continue condition, the carried values (the body's outputs from
// `first` on), and per scan output its list with the iteration's value appended.
void Importer::loop_body_outputs(Block* b, Value* cond, const ox::GraphProto& body, int first,
                                 int carried, const std::vector<Value*>& lists) {
  b->add_output(cond);
  for (int k = 0; k < carried; ++k) b->add_output(tensor_in(body.output(first + k).name()));
  for (size_t k = 0; k < lists.size(); ++k) {
    Value* item = list_of({tensor_in(body.output(first + carried + static_cast<int>(k)).name())});
    Node* add = append("operator.add", {lists[k], item});
    b->add_output(add->add_output(Type::list(Type::tensor())));
  }
}

// A loop's results as node n's outputs: the carried values, then each scan output's list
// stacked along axes[k] (and flipped back along it where reverse[k]).
void Importer::bind_loop_results(const ox::NodeProto& n, Node* loop, int carried,
                                 const std::vector<int64_t>& axes,
                                 const std::vector<int64_t>& reverse) {
  for (int k = 0; k < carried && k < n.output_size(); ++k)
    bind(n, k, loop->output(static_cast<size_t>(k)));
  for (size_t k = 0; carried + static_cast<int>(k) < n.output_size(); ++k) {
    int i = carried + static_cast<int>(k);
    if (n.output(i).empty()) continue;
    Value* list = loop->output(static_cast<size_t>(i));
    if (!reverse[k]) {
      call("torch.stack", {list, c_int(axes[k])}, n, i);
      continue;
    }
    Value* y = method("torch.stack", {list, c_int(axes[k])});
    call("torch.flip", {y, c_ints({axes[k]})}, n, i);
  }
}

void Importer::lift_scan(const ox::NodeProto& n) {
  if (opset_ < 9) unsupported(n, "Scan before opset 9 (with sequence_lens)");
  const ox::GraphProto& body = subgraph(n, "body");
  int64_t m = attr_i(n, "num_scan_inputs", 0);
  int states = n.input_size() - static_cast<int>(m);
  int scans_out = body.output_size() - states;
  if (m <= 0 || states < 0 || scans_out < 0 || body.input_size() != n.input_size())
    bad("ONNX op Scan (" + where(n) +
        "): its inputs, outputs and body do not agree — re-export "
        "the model");
  auto in_axes = attr_ints(n, "scan_input_axes").value_or(std::vector<int64_t>(m, 0));
  auto in_dirs = attr_ints(n, "scan_input_directions").value_or(std::vector<int64_t>(m, 0));
  auto out_axes = attr_ints(n, "scan_output_axes").value_or(std::vector<int64_t>(scans_out, 0));
  auto out_dirs =
      attr_ints(n, "scan_output_directions").value_or(std::vector<int64_t>(scans_out, 0));
  if (in_axes.size() != static_cast<size_t>(m) || in_dirs.size() != static_cast<size_t>(m) ||
      out_axes.size() != static_cast<size_t>(scans_out) ||
      out_dirs.size() != static_cast<size_t>(scans_out))
    bad("ONNX op Scan (" + where(n) + "): attribute lengths do not match — re-export the model");
  // Axes of the scan inputs made non-negative (their rank is needed for negative ones).
  for (int64_t k = 0; k < m; ++k) {
    if (in_axes[k] >= 0) continue;
    auto r = known_rank(n.input(states + static_cast<int>(k)));
    if (!r) unsupported(n, "a negative scan axis on an input of unknown rank");
    in_axes[k] += *r;
  }
  const std::string& first = n.input(states);
  Value* len = size_of(first, in_axes[0]);
  std::vector<Value*> ins = {len, c_bool(true)};
  for (int k = 0; k < states; ++k) ins.push_back(tensor_in(n.input(k)));
  for (int k = 0; k < scans_out; ++k) ins.push_back(list_of({}));
  Node* loop = append_control("prim.Loop", ins);
  for (int k = 0; k < states; ++k) loop->add_output(type_for(body.input(k).name()));
  for (int k = 0; k < scans_out; ++k) loop->add_output(Type::list(Type::tensor()));
  Block* b = loop->add_block();
  Value* t = b->add_input(Type::of(Type::Kind::Int), "t");
  for (int k = 0; k < states; ++k) {
    const std::string& name = body.input(k).name();
    env_[name] = b->add_input(value_type(body.input(k)), value_hint(name));
  }
  std::vector<Value*> lists;
  for (int k = 0; k < scans_out; ++k)
    lists.push_back(b->add_input(Type::list(Type::tensor()), "ys"));
  Value* last = nullptr;  // len - 1, for reverse directions
  lift_subgraph(
      body, b,
      [&] {
        for (int64_t k = 0; k < m; ++k) {
          Value* idx = t;
          if (in_dirs[k]) {
            if (!last) last = scalar_op("operator.sub", {len, c_int(1)}, Type::Kind::Int);
            idx = scalar_op("operator.sub", {last, t}, Type::Kind::Int);
          }
          const std::string& xs = n.input(states + static_cast<int>(k));
          env_[body.input(states + static_cast<int>(k)).name()] =
              method("Tensor.select", {tensor_in(xs), c_int(in_axes[k]), idx});
        }
      },
      [&] { loop_body_outputs(b, c_bool(true), body, 0, states, lists); });
  if (hoist_ == loop) hoist_ = nullptr;
  bind_loop_results(n, loop, states, out_axes, out_dirs);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
