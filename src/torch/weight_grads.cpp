#include "weight_grads.hpp"

#include <c10/core/GradMode.h>

#include "column_sums.hpp"

namespace tessera::pt {

WeightGrads weight_grads(const at::Tensor& dy, const at::Tensor& x, bool need_w, bool need_b) {
  WeightGrads g;
#ifdef TESSERA_TORCH_CUDA
  // Not under create_graph: the fused matmul is not recorded by autograd.
  if (need_w && need_b && dy.is_cuda() && !c10::GradMode::is_enabled() && dy.scalar_type() == at::kFloat &&
      x.scalar_type() == at::kFloat && dy.dim() == 2 && x.dim() == 2 && dy.size(0) == x.size(0) &&
      weight_grads_cuda(dy, x, g.dw, g.db))
    return g;
#endif
  if (need_w) g.dw = dy.t().mm(x);
  if (need_b) g.db = column_sums(dy, dy.scalar_type());
  return g;
}

}  // namespace tessera::pt
