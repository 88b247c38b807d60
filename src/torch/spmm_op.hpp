#pragma once
// The SpMM family's torch ops (schemas and kernels in spmm_op.cpp):
//   tessera::spmm(rowptr, col, values?, x, t_rowptr?, t_col?, t_perm?, graph_id=0, t_graph_id=0, bias?,
//                 t_values?)
//       Y = A X (+ bias) with A = CSR (rows = targets, cols = x.size(0)), values optional (all
//       ones), bias optional ([F], added to every row in the kernel's single write of Y).
//       CPU and CUDA kernels call ops::spmm; the Autograd kernel adds
//         dX = A^T dY          (spmm on the transpose; pass t_* to reuse a cached one, and
//                               t_values = values[t_perm], memoized by the caller, to skip the gather)
//         dvalues = sddmm(dY, X) when values require grad, dbias = sum of dY over rows.
//       graph_id / t_graph_id: tessera::new_graph_id() identities of A and A^T, keys of the
//       core's per-graph caches (0 = anonymous, caches bypassed).
//   tessera::sddmm(rowptr, col, a, b, graph_id=0) -> out[k] = <a[row k], b[col k]>.
#include <ATen/ATen.h>

namespace tessera::pt {

// Calls through the dispatcher (autograd-aware).
at::Tensor spmm(const at::Tensor& rowptr, const at::Tensor& col, const c10::optional<at::Tensor>& values,
                const at::Tensor& x, const c10::optional<at::Tensor>& t_rowptr = {},
                const c10::optional<at::Tensor>& t_col = {}, const c10::optional<at::Tensor>& t_perm = {},
                int64_t graph_id = 0, int64_t t_graph_id = 0, const c10::optional<at::Tensor>& bias = {},
                const c10::optional<at::Tensor>& t_values = {});
at::Tensor sddmm(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& a, const at::Tensor& b,
                 int64_t graph_id = 0);

}  // namespace tessera::pt
