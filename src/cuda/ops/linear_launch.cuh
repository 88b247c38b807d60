#pragma once
// Host side shared by the fp32 projection's launchers (cuda/ops/linear.cu for the mma.sync tiles,
// cuda/sm90a/linear_wgmma.cu for the wgmma tile): the shared-memory opt-in and the parameters.
#include <atomic>
#include <cstdint>
#include <limits>

#include "cuda/ops/linear_kernels.cuh"
#include "tessera/core/cuda_check.hpp"
#include "tessera/ops/linear.hpp"

namespace tessera::cuda::linear {

// Whether p is a multiple of `bytes` (the kernels' vector loads and stores need it).
inline bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Raises Kernel's dynamic shared-memory limit to `bytes` (above 48 KB needs this opt-in), once per
// device and kernel.
template <auto Kernel>
void opt_in_shared(int bytes) {
  static std::atomic<uint64_t> opted{0};
  int dev = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&dev));
  const uint64_t bit = uint64_t(1) << (dev & 63);
  if (opted.load(std::memory_order_acquire) & bit) return;
  TESSERA_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  opted.fetch_or(bit, std::memory_order_acq_rel);
}

// The kernels' parameters for BM x BN tiles of Y, and the number of tiles (one CTA each), checked
// to fit one launch.
inline Params params_for(const ops::LinearArgs& a, int bm, int bn, int64_t& tiles) {
  Params p;
  p.x = a.X.as<const float>();
  p.w = a.W.as<const float>();
  p.bias = static_cast<const float*>(a.bias);
  p.y = a.Y.as<float>();
  if (a.R.data != nullptr) {
    p.r = a.R.as<const float>();
    p.ldr = a.R.ld;
  }
  p.m = a.X.rows;
  p.n = int(a.n());
  p.k = int(a.k());
  p.nb = int(a.n() / a.blocks);
  p.x_cols = a.X.cols;
  if (a.has_x2()) {
    p.x2 = a.X2.as<const float>();
    p.ldx2 = a.X2.ld;
    p.k2 = int(a.X2.cols);
  }
  p.x_steps = (p.k + kBK - 1) / kBK;
  p.ldx = a.X.ld;
  p.ldw = a.W.ld;
  p.ldy = a.Y.ld;
  p.n_tiles = (p.n + bn - 1) / bn;
  tiles = ((p.m + bm - 1) / bm) * p.n_tiles;
  TESSERA_CHECK(tiles <= std::numeric_limits<int32_t>::max(), "linear: ", p.m, " x ", p.n,
                " output is too large for one launch of ", bm, "x", bn, " tiles");
  return p;
}

}  // namespace tessera::cuda::linear
