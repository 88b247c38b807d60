#pragma once
// Column sums of a [rows, cols] gradient: the bias gradients of the ops' backward passes.
// On CUDA in fp32/fp64 they are cuBLAS's gemv against a vector of ones (t^T 1), which streams the
// matrix at the device's bandwidth where torch's sum(0) does not: H200, GPU time per call from CUDA
// graphs (bench/results/h200_20261203b/colsum_probe_*.txt): [19717, 1024] 47.4 -> 24.8 us,
// [65536, 512] 83.1 -> 38.2 us, [2^20, 256] 332 -> 250 us (torch at 77% of the read floor, gemv
// at it; those times are with the ones already made, as they now are: a vector of ones is kept per
// device and dtype, cuda/column_sums.cpp). Everything else (CPU, 16-bit types, strided rows): t.sum(0).
#include <ATen/ATen.h>

namespace tessera::pt {

// Sums over dim 0 of a 2-D tensor, in `dtype`.
at::Tensor column_sums(const at::Tensor& t, at::ScalarType dtype);

#ifdef TESSERA_TORCH_CUDA
// The CUDA path for a [rows >= 1, cols >= 1] fp32/fp64 tensor with packed rows, in its own dtype:
// cuBLAS's gemv against kept ones, on torch's handle (src/torch/cuda/column_sums.cpp).
at::Tensor column_sums_cuda(const at::Tensor& t);
#endif

}  // namespace tessera::pt
