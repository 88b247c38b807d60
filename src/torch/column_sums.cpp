#include "column_sums.hpp"

#include <torch/library.h>

#include <c10/core/GradMode.h>

#include "boundary.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

at::Tensor column_sums(const at::Tensor& t, at::ScalarType dtype) {
#ifdef TESSERA_TORCH_CUDA
  // The gemv is not recorded by autograd: a sum that must itself be differentiable (create_graph)
  // takes torch's.
  const auto st = t.scalar_type();
  const bool recorded = c10::GradMode::is_enabled() && t.requires_grad();
  if (t.is_cuda() && !recorded && t.dim() == 2 && (st == at::kFloat || st == at::kDouble) && t.size(0) > 0 &&
      t.size(1) > 0 && t.stride(1) == 1) {
    at::Tensor s = column_sums_cuda(t);
    return s.scalar_type() == dtype ? s : s.to(dtype);
  }
#endif
  return t.sum(0, false, dtype);
}

}  // namespace tessera::pt

namespace {
// The ops' bias-gradient reduction as an op of its own (Python and its tests reach it here).
at::Tensor column_sums_op(const at::Tensor& t) {
  TESSERA_CHECK(t.defined() && t.dim() == 2, "column_sums: expected a 2-D tensor (rows x columns), got shape ",
                t.defined() ? t.sizes() : at::IntArrayRef{});
  return tessera::pt::column_sums(t, t.scalar_type());
}
}  // namespace

TORCH_LIBRARY_FRAGMENT(tessera, m) { m.def("column_sums(Tensor t) -> Tensor", TESSERA_OP(column_sums_op)); }
