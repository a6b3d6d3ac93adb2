// What the importer knows of an ONNX value's shape: the file's (after ONNX shape inference), and
// what infer-shapes finds over the IR lifted so far when the file leaves it open.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include "passes/pass.h"

#include <spdlog/spdlog.h>

namespace tt::onnx_import {

// The static shape of an ONNX value, when fully known.
std::optional<std::vector<int64_t>> Importer::static_shape(const std::string& name) {
  auto c = consts_.find(name);
  if (c != consts_.end()) return c->second.sizes().vec();
  auto e = env_.find(name);
  const Type* t = nullptr;
  if (e != env_.end()) t = &e->second->type();
  auto it = types_.find(name);
  if ((!t || !t->shape) && it != types_.end()) t = &it->second;
  if (!t || !t->shape) return std::nullopt;
  for (int64_t d : *t->shape)
    if (d < 0) return std::nullopt;
  return *t->shape;
}

std::optional<int64_t> Importer::rank_of(const std::string& name) {
  auto c = consts_.find(name);
  if (c != consts_.end()) return c->second.dim();
  auto e = env_.find(name);
  if (e != env_.end() && e->second->type().shape)
    return static_cast<int64_t>(e->second->type().shape->size());
  auto it = types_.find(name);
  if (it != types_.end() && it->second.shape) return static_cast<int64_t>(it->second.shape->size());
  return std::nullopt;
}

// Note [Shapes ONNX inference leaves open]
// ONNX shape inference runs without data propagation, so a value computed from a run-time
// shape tensor has an unknown shape, often an unknown rank, in the file: the Reshape back to
// Shape(x) of GroupNorm's InstanceNormalization pattern, a Resize to sizes made of
// Shape/Slice/Concat, and everything after them. A Shape (or Size) of such a value would look
// dynamic although every graph input is static. When the loader needs that shape, it runs
// infer-shapes (the interpreter on meta tensors) over the IR lifted so far:
// - static graph inputs: every lifted value gets its concrete shape, so the Shape folds to a
//   constant exactly as it does when ONNX knew the shape;
// - dynamic axes: one run with the dynamic dims set to kProbeDim gives the rank only; the
//   types are put back, the values of unknown rank get that rank with all dims unknown, and the
//   Shape becomes x.size(k) code (Note [Dynamic shapes]), which is right at any size.
// A probe runs at most once per new IR node (cost: one meta run per probe, not per query).
// (Importer::kProbeDim: importer.h.)

bool Importer::inputs_static() const {
  for (Value* in : g_->inputs())
    if (!in->type().is_complete()) return false;
  return true;
}

// Runs infer-shapes over the IR lifted so far; false when nothing was lifted since the last
// probe (the answer would be the same) or the graph inputs cannot be given shapes.
bool Importer::probe_shapes() {
  if (hoist_) return false;  // inside a prim.If/prim.Loop still being filled
  Node* last = g_->block()->back();
  size_t count = g_->num_nodes();
  if (last == probed_last_ && count == probed_count_) return false;
  probed_last_ = last;
  probed_count_ = count;
  Diagnostics scratch;  // a probe that stops early is not the user's concern
  PassContext ctx(scratch);
  ++probes_;
  spdlog::debug("onnx: shape probe {} over {} lifted node(s) at node {}", probes_, count,
                node_index_);
  if (inputs_static()) {
    run_infer_shapes(*g_, ctx);
    return true;
  }
  std::vector<std::pair<Value*, Type>> saved;
  for (Value* in : g_->inputs()) saved.emplace_back(in, in->type());
  for (Node* nd = g_->block()->front(); nd; nd = nd->next())
    for (Value* o : nd->outputs()) saved.emplace_back(o, o->type());
  for (Value* in : g_->inputs())
    if (!in->type().is_tensor() || !in->type().shape || in->type().dtype == DType::Unknown)
      return false;  // no meta tensor to run it on
  for (Value* in : g_->inputs()) {
    Type t = in->type();
    for (int64_t& d : *t.shape)
      if (d < 0) d = kProbeDim;
    in->set_type(t);
  }
  try {
    run_infer_shapes(*g_, ctx);
  } catch (const std::exception& e) {
    spdlog::debug("onnx: shape probe failed: {}", first_line(e.what()));
  }
  std::vector<std::pair<Value*, size_t>> ranks;
  for (auto& [v, t] : saved)
    if (t.is_tensor() && !t.shape && v->type().is_tensor() && v->type().shape)
      ranks.emplace_back(v, v->type().shape->size());
  for (auto& [v, t] : saved) v->set_type(t);
  for (auto& [v, r] : ranks) {
    Type t = v->type();
    t.shape = std::vector<int64_t>(r, -1);
    v->set_type(t);
  }
  return true;
}

// static_shape, asking infer-shapes when ONNX left the shape of a lifted value open and the
// graph inputs are static (Note [Shapes ONNX inference leaves open]).
std::optional<std::vector<int64_t>> Importer::known_shape(const std::string& name) {
  auto s = static_shape(name);
  if (s || !env_.count(name) || !inputs_static() || !probe_shapes()) return s;
  return static_shape(name);
}

// rank_of, likewise (also with dynamic axes: the rank does not depend on them).
std::optional<int64_t> Importer::known_rank(const std::string& name) {
  auto r = rank_of(name);
  if (r || !env_.count(name) || !probe_shapes()) return r;
  return rank_of(name);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
