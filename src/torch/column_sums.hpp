#pragma once
// Column sums of a [rows, cols] gradient: the bias gradients of the ops' backward passes.
// On CUDA in fp32/fp64 they are cuBLAS's gemv against a vector of ones (t^T 1), which streams the
// matrix at the device's bandwidth where torch's sum(0) does not: H200, GPU time per call from CUDA
// graphs (bench/results/h200_20261203b/colsum_probe_*.txt): [19717, 1024] 47.4 -> 24.8 us,
// [65536, 512] 83.1 -> 38.2 us, [2^20, 256] 332 -> 250 us (torch at 77% of the read floor, gemv
// at it; those times are with the ones already made, as they now are: a vector of ones is kept per
// device and dtype, cuda/ones.cpp). Everything else (CPU, 16-bit types, strided rows): t.sum(0).
#include <ATen/ATen.h>

namespace tessera::pt {

// Sums over dim 0 of a 2-D tensor, in `dtype`.
at::Tensor column_sums(const at::Tensor& t, at::ScalarType dtype);

#ifdef TESSERA_TORCH_CUDA
// n ones of options' dtype on its CUDA device: a prefix of a vector kept for the gemvs, read only
// (src/torch/cuda/ones.cpp says when it is made per call instead).
at::Tensor cuda_ones(int64_t n, const at::TensorOptions& options);
#endif

}  // namespace tessera::pt
