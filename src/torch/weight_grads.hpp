#pragma once
// The parameter gradients of y = x w^T + b from dy: dw = dy^T x and db = the column sums of dy.
//
// On CUDA in fp32, when both are asked, they are one cuBLASLt matmul whose epilogue sums dy's
// columns while the GEMM streams them (CUBLASLT_EPILOGUE_BGRADB). Done apart, the gemv of
// column_sums read all of dy once more: on PubMed GATv2 8x128 that is a [19717, 2048] fp32
// gradient, 161 MB and 43 us of a 1.64 ms training step (bench/results/h200_20261203f). Where
// cuBLASLt offers no algorithm for the shape (or another dtype, device or create_graph), the two
// products run apart as before: dy^T x through torch, db through column_sums.
#include <ATen/ATen.h>

namespace tessera::pt {

struct WeightGrads {
  at::Tensor dw, db;  // undefined where not asked
};

WeightGrads weight_grads(const at::Tensor& dy, const at::Tensor& x, bool need_w, bool need_b);

#ifdef TESSERA_TORCH_CUDA
// The fused CUDA path (src/torch/cuda/weight_grads.cpp) for fp32 dy [rows, out] and x [rows, in]
// with packed rows: fills dw [out, in] and db [out], or returns false (nothing written) where
// cuBLASLt has no algorithm for it.
bool weight_grads_cuda(const at::Tensor& dy, const at::Tensor& x, at::Tensor& dw, at::Tensor& db);
#endif

}  // namespace tessera::pt
