// A custom op library for the tests of Note [Op libraries] (lib/ir/model.h): what a project's own
// TORCH_LIBRARY extension looks like to tinytrace. scripts/gen_oplib_models.py traces a model
// calling these ops (after torch.ops.load_library), and tests/oplib.cmake converts it with and
// without --load-library.
#include <torch/library.h>

#include <ATen/ATen.h>

namespace {

// x + alpha * y * y: not any one ATen op, so a conversion that lost the call could not match.
at::Tensor scaled_add(const at::Tensor& x, const at::Tensor& y, double alpha) {
  return x + alpha * y * y;
}

// (max over dim 1, the input divided by it): a custom op with two results.
std::tuple<at::Tensor, at::Tensor> max_normalize(const at::Tensor& x) {
  at::Tensor m = std::get<0>(x.abs().max(1, /*keepdim=*/true)) + 1.0;
  return {m, x / m};
}

}  // namespace

TORCH_LIBRARY(tt_test, m) {
  m.def("scaled_add(Tensor x, Tensor y, float alpha) -> Tensor");
  m.def("max_normalize(Tensor x) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(tt_test, CPU, m) {
  m.impl("scaled_add", scaled_add);
  m.impl("max_normalize", max_normalize);
}
