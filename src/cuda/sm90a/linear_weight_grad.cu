// A projection's parameter gradients dW = dY^T X and db = column sums of dY (LinearGradArgs in
// tessera/ops/linear.hpp) as the three tf32 products of the projection (linear_wgmma.cu) on
// Hopper's wgmma. Compiled for sm_90a only.
//
// Why: a layer's weight gradients ran on cuBLAS's fp32 SGEMM (CUDA cores, ~50 TFLOP/s) and its bias
// gradients on a gemv that reads dY once more: on the 2^20-node grid a Graph Transformer 2x256
// training step spent 11.2 ms in the first and 2.0 ms in the second of 38.1 ms
// (bench/results/h200_20261203g, gap_*.txt).
//
// Scheme: the product's rows are dY's columns n, its columns X's columns k, and it sums over the
// node rows m, which are split across the machine: CTA (split, tile) sums a fixed slice of rows
// into its own partial tile, and reduce_kernel adds the partials in split order, so the result does
// not depend on timing. Per step of 32 rows, cp.async copies dY's and X's tiles as they lie
// (rows m, 3 stages). A = dY^T comes from registers: lane (g, t) of warp w loads rows m = 8s + t
// and 8s + t + 4 of columns n = 16w + 2g, 2g + 1 (one float2 each; so accumulator row g holds
// n = 16w + 2g and row g + 8 holds 16w + 2g + 1) and splits them in registers; the same values
// feed the column sums. B = X^T must be K-major (m contiguous) in shared memory for tf32 wgmma:
// each step's X tile is transposed and split into hi and lo tiles (wgmma's 128-byte swizzle)
// while the tensor cores work on the previous step.
#include <cstdint>

#include "cuda/ops/linear_launch.cuh"  // cp_async16, smem_u32, split_tf32, opt_in_shared
#include "cuda/sm90a/wgmma.cuh"
#include "cuda/sm90a/wgmma_layout.hpp"
#include "cuda/waves.hpp"
#include "ops/linear/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::cuda::linear_weight_grad {
namespace {

using tessera::cuda::linear::smem_u32;
using wgmma_layout::chunk_at;
using wgmma_layout::tile_desc_lo;

constexpr int BM = 128, BN = 128, kBK = 32, kStages = 3, kThreads = 256;
constexpr int kLdA = BM + 8;  // dY's staged rows: +8 floats puts lane (g, t)'s float2 on distinct banks
constexpr int kLdB = BN + 4;  // X's staged rows: 16-byte rows, read down columns by consecutive k
constexpr int kSplit = BN * kBK;                // floats of one hi or lo tile of X^T
constexpr int kRaw = kBK * kLdA + kBK * kLdB;   // floats of one raw stage (dY, then X)
constexpr int kSmemBytes = (4 * kSplit + kStages * kRaw) * int(sizeof(float)) + 1024;

struct Params {
  const float* dy = nullptr;  // M x N, row stride ld_dy
  const float* x = nullptr;   // M x K, row stride ld_x
  float* part = nullptr;      // splits x N x K partial dW
  float* part_db = nullptr;   // splits x N partial db
  int64_t m = 0, ld_dy = 0, ld_x = 0, rows_per_split = 0;
  int n = 0, k = 0, k_tiles = 0, tiles = 0;
};

__global__ void __launch_bounds__(kThreads, 1) weight_grad_kernel(const Params p) {
#ifdef TESSERA_HAVE_WGMMA_CODE
  using namespace tessera::cuda::wgmma;
  extern __shared__ float smem_raw[];
  float* sm = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  float* split_tiles = sm;  // [buffer b][hi, lo][BN][32], swizzled
  float* raw = sm + 4 * kSplit;

  const int split = int(blockIdx.x) / p.tiles, tile = int(blockIdx.x) % p.tiles;
  const int n0 = (tile / p.k_tiles) * BM, k0 = (tile % p.k_tiles) * BN;
  const int64_t m_begin = split * p.rows_per_split;
  const int64_t m_end = m_begin + p.rows_per_split < p.m ? m_begin + p.rows_per_split : p.m;
  const int steps = m_end > m_begin ? int((m_end - m_begin + kBK - 1) / kBK) : 0;
  const int tid = threadIdx.x;

  auto fetch = [&](int st) {
    if (st < steps) {
      float* a = raw + (st % kStages) * kRaw;
      float* b = a + kBK * kLdA;
      const int64_t m0 = m_begin + int64_t(st) * kBK;
#pragma unroll
      for (int j = 0; j < kBK * BM / 4 / kThreads; ++j) {
        const int q = tid + kThreads * j, r = q / (BM / 4), c = 4 * (q % (BM / 4));
        const bool ok = m0 + r < m_end && n0 + c < p.n;
        tessera::cuda::linear::cp_async16(smem_u32(a + r * kLdA + c), ok ? p.dy + (m0 + r) * p.ld_dy + n0 + c : p.dy, ok);
      }
#pragma unroll
      for (int j = 0; j < kBK * BN / 4 / kThreads; ++j) {
        const int q = tid + kThreads * j, r = q / (BN / 4), c = 4 * (q % (BN / 4));
        const bool ok = m0 + r < m_end && k0 + c < p.k;
        tessera::cuda::linear::cp_async16(smem_u32(b + r * kLdB + c), ok ? p.x + (m0 + r) * p.ld_x + k0 + c : p.x, ok);
      }
    }
    tessera::cuda::linear::cp_async_commit();
  };
  // X's tile of step st, transposed and split: hi and lo of buffer st & 1, row k, chunk c = rows
  // m 4c .. 4c + 3. Consecutive lanes take consecutive k: distinct banks on the column reads.
  auto split_x = [&](int st) {
    const float* b = raw + (st % kStages) * kRaw + kBK * kLdA;
    float* hi = split_tiles + (st & 1) * 2 * kSplit;
#pragma unroll
    for (int j = 0; j < BN * kBK / 4 / kThreads; ++j) {
      const int q = tid + kThreads * j, k = q % BN, c = q / BN;
      uint4 h, l;
      tessera::cuda::split_tf32(b[(4 * c) * kLdB + k], h.x, l.x);
      tessera::cuda::split_tf32(b[(4 * c + 1) * kLdB + k], h.y, l.y);
      tessera::cuda::split_tf32(b[(4 * c + 2) * kLdB + k], h.z, l.z);
      tessera::cuda::split_tf32(b[(4 * c + 3) * kLdB + k], h.w, l.w);
      *reinterpret_cast<uint4*>(hi + chunk_at(k, c)) = h;
      *reinterpret_cast<uint4*>(hi + kSplit + chunk_at(k, c)) = l;
    }
    fence_proxy_async();
  };

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
  float sum0 = 0.f, sum1 = 0.f;  // column sums of dY at n = nrow, nrow + 1 over this lane's rows m

  const int wg = tid >> 7, lane = tid & 31, warp = (tid >> 5) & 3, g = lane >> 2, t = lane & 3;
  const int nrow = wg * 64 + warp * 16 + 2 * g;  // accumulator rows g, g + 8 are n = nrow, nrow + 1
  fetch(0);
  fetch(1);
  if (steps > 0) {
    tessera::cuda::linear::cp_async_wait<1>();
    __syncthreads();
    split_x(0);
    __syncthreads();
  }
  for (int st = 0; st < steps; ++st) {
    const float* a = raw + (st % kStages) * kRaw;
    uint32_t ah[4][4], al[4][4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {  // a0 (n, m = 8s + t), a1 (n + 1, 8s + t), a2 (n, 8s + t + 4), a3 (n + 1, 8s + t + 4)
      const float2 lo4 = *reinterpret_cast<const float2*>(a + (8 * s + t) * kLdA + nrow);
      const float2 hi4 = *reinterpret_cast<const float2*>(a + (8 * s + t + 4) * kLdA + nrow);
      sum0 += lo4.x + hi4.x;
      sum1 += lo4.y + hi4.y;
      tessera::cuda::split_tf32(lo4.x, ah[s][0], al[s][0]);
      tessera::cuda::split_tf32(lo4.y, ah[s][1], al[s][1]);
      tessera::cuda::split_tf32(hi4.x, ah[s][2], al[s][2]);
      tessera::cuda::split_tf32(hi4.y, ah[s][3], al[s][3]);
    }
    const float* bt = split_tiles + (st & 1) * 2 * kSplit;
    const uint32_t bh = tile_desc_lo(smem_u32(bt)), bl = tile_desc_lo(smem_u32(bt + kSplit));
    pin(acc);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < kBK / 8; ++s) {
      wgmma_m64n128k8_rs(acc, al[s], bh + 2 * s);  // small terms first
      wgmma_m64n128k8_rs(acc, ah[s], bl + 2 * s);
      wgmma_m64n128k8_rs(acc, ah[s], bh + 2 * s);
    }
    wgmma_commit();
    pin(acc);
    // While the tensor cores work: refill the slot step st - 1 used, then split step st + 1 into
    // the other buffer (its products, step st - 1's, finished before the last barrier).
    fetch(st + 2);
    if (st + 1 < steps) {
      tessera::cuda::linear::cp_async_wait<1>();  // step st + 1 landed (this thread's part)
      __syncthreads();                             // ... and every thread's
      split_x(st + 1);
    }
    wgmma_wait_all();
    pin(acc);
    __syncthreads();
  }

  // Partial tile of this split: accumulator acc[4 j + 2 h + e] is (n = nrow + h, k = 8 j + 2 t + e).
  float* part = p.part + int64_t(split) * p.n * p.k;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int k = k0 + 8 * j + 2 * t;
    if (k >= p.k) continue;  // K even: k + 1 < K too
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = n0 + nrow + h;
      if (n < p.n)
        *reinterpret_cast<float2*>(part + int64_t(n) * p.k + k) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    }
  }
  // Column sums: the 4 lanes t of a row group saw disjoint rows m; the first k-tile writes them.
  sum0 += __shfl_xor_sync(0xffffffffu, sum0, 1);
  sum0 += __shfl_xor_sync(0xffffffffu, sum0, 2);
  sum1 += __shfl_xor_sync(0xffffffffu, sum1, 1);
  sum1 += __shfl_xor_sync(0xffffffffu, sum1, 2);
  if (p.part_db != nullptr && k0 == 0 && t == 0) {
    const int n = n0 + nrow;
    if (n < p.n) p.part_db[int64_t(split) * p.n + n] = sum0;
    if (n + 1 < p.n) p.part_db[int64_t(split) * p.n + n + 1] = sum1;
  }
#else
  __trap();  // built without sm_90a code; linear_weight_grad_wgmma_eligible keeps launches away
#endif
}

// dW[n, k] = sum over splits of the partials, in split order (and db likewise): deterministic.
__global__ void reduce_kernel(const float* __restrict__ part, const float* __restrict__ part_db, int splits, int n,
                              int k, float* __restrict__ dw, int64_t ld_dw, float* __restrict__ db) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, nk = int64_t(n) * k;
  if (i < nk) {
    float s = 0.f;
    for (int q = 0; q < splits; ++q) s += part[q * nk + i];
    dw[(i / k) * ld_dw + i % k] = s;
  } else if (db != nullptr && i < nk + n) {
    const int64_t j = i - nk;
    float s = 0.f;
    for (int q = 0; q < splits; ++q) s += part_db[q * int64_t(n) + j];
    db[j] = s;
  }
}

}  // namespace
}  // namespace tessera::cuda::linear_weight_grad

namespace tessera::ops::detail {

bool linear_weight_grad_wgmma_eligible(const LinearGradArgs& a) {
  using tessera::cuda::linear::aligned;
  return a.DW.device.is_cuda() && a.DW.dtype == DType::f32 && a.DY.cols % 4 == 0 && a.X.cols % 4 == 0 &&
         a.DY.cols < (int64_t(1) << 30) && a.X.cols < (int64_t(1) << 30) && a.DY.ld % 4 == 0 && a.X.ld % 4 == 0 &&
         a.DW.ld % 2 == 0 && aligned(a.DY.data, 16) && aligned(a.X.data, 16) && aligned(a.DW.data, 8) &&
         (a.db == nullptr || aligned(a.db, 4)) && cuda_compute_capability(a.DW.device.index) == 90;
}

void linear_weight_grad_wgmma_cuda(const LinearGradArgs& a, const Exec& exec) {
  namespace lg = tessera::cuda::linear_weight_grad;
  const cudaStream_t s = cuda_stream(exec.stream);
  lg::Params p;
  p.dy = a.DY.as<const float>();
  p.x = a.X.as<const float>();
  p.m = a.X.rows;
  p.ld_dy = a.DY.ld;
  p.ld_x = a.X.ld;
  p.n = int(a.DY.cols);
  p.k = int(a.X.cols);
  p.k_tiles = (p.k + lg::BN - 1) / lg::BN;
  p.tiles = ((p.n + lg::BM - 1) / lg::BM) * p.k_tiles;
  if (p.tiles == 0) return;
  // One CTA a multiprocessor (its shared memory): the rows split into slices that fill whole
  // waves (full_wave_splits), each at least 8 steps of 32 rows (fewer would spend more on the
  // partials than on the products).
  const int64_t sms = cuda_multiprocessors(a.DW.device.index), by_rows = (p.m + 8 * lg::kBK - 1) / (8 * lg::kBK);
  const int splits = int(tessera::cuda::full_wave_splits(p.tiles, sms, by_rows));
  p.rows_per_split = ((p.m + splits - 1) / splits + lg::kBK - 1) / lg::kBK * lg::kBK;
  const int64_t nk = int64_t(p.n) * p.k;
  TESSERA_CHECK(int64_t(splits) * p.tiles < (int64_t(1) << 31), "linear_weight_grad: ", p.n, " x ", p.k,
                " is too large for one launch");
  Scratch part(exec, size_t(splits) * size_t(nk + p.n) * sizeof(float));
  p.part = part.as<float>();
  p.part_db = a.db != nullptr ? p.part + int64_t(splits) * nk : nullptr;
  constexpr auto kernel = &lg::weight_grad_kernel;
  tessera::cuda::linear::opt_in_shared<kernel>(lg::kSmemBytes);
  kernel<<<unsigned(int64_t(splits) * p.tiles), lg::kThreads, lg::kSmemBytes, s>>>(p);
  TESSERA_CUDA_LAUNCH_CHECK();
  const int64_t count = nk + (a.db != nullptr ? p.n : 0);
  lg::reduce_kernel<<<unsigned((count + 255) / 256), 256, 0, s>>>(p.part, p.part_db, splits, p.n, p.k,
                                                                  a.DW.as<float>(), a.DW.ld, static_cast<float*>(a.db));
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace tessera::ops::detail
