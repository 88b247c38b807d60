// The fp32 projection Y = X W^T (+ b) (+ R) as three tf32 products on Hopper's warpgroup tensor-core
// instruction (wgmma), the LinearArgs contract of tessera/ops/linear.hpp. Compiled for sm_90a only
// (src/CMakeLists.txt): wgmma exists on compute capability 9.0 alone, so the variant is eligible
// there alone (linear_wgmma_eligible).
//
// Why: the mma.sync kernel (cuda/ops/linear_kernels.cuh) runs at 47-57 TFLOP/s on the H200, a third
// of the tensor cores' tf32 rate over three products, and the layers' projections and input
// gradients are 35-57% of a GATv2 or Graph Transformer training step on PubMed (and ~70% of a Graph
// Transformer step on the 2^20-node grid).
//
// History: the first version (bench/results/h200_20261203e) took both operands from shared memory
// and split each staged tile there into hi and lo tiles: 61-68 TFLOP/s at best, 5-30% slower than
// mma.sync at K = 128. Three SS products re-read both operand tiles and the split wrote and re-read
// them, about 240 KB of shared traffic per 32-wide step of a 128x128 tile, more than the tensor
// work's time at 128 bytes a clock.
//
// Scheme now (the error analysis of linear_kernels.cuh holds unchanged):
// - W is split once per call, before the product (split_weight_kernel): hi and lo copies, N x Kp
//   K-major whatever W's layout (so LinearArgs::w_transposed costs nothing here), zero-padded to
//   whole tiles, each 32-wide step's columns in wgmma_layout::slice_column order. The copies are
//   2 x 4 bytes per weight (a 1024 x 128 weight: 1 MB) in scratch from the caller's allocator.
// - The product's B (W hi, W lo) comes from shared memory as plain K-major tiles (no split pass);
//   its A (X) from registers: each lane loads its rows' 8 values of a step as two float4 from the
//   staged X tile and splits them in registers (the RS form of wgmma), so X is read from shared
//   memory once.
// - Per step of 32: 12 wgmmas per warpgroup (4 k-slices x lo*hi, hi*lo, hi*hi), 2 stages; 2 CTAs a
//   multiprocessor, so one CTA's loads, splits and epilogue overlap the other's products.
// - Thread 0 loads each stage with the TMA (cuda/sm90a/tma.cuh): X's box, swizzled and zero-filled
//   by the hardware, and the W block as one 32 KB bulk copy, both counted on the stage's barrier.
//   Before, every thread issued 12 cp.async a step; at 128 registers their addresses spilled inside
//   the K loop, and ncu of the 128 x 128 tile at 2^20 x 128 -> 512 put 40% of its stall cycles on
//   those local-memory reloads, with the tensor pipe 49% busy. With the TMA: 122 registers, no
//   spill, 1923 -> 1635 us there (bench/results/h200_20261204b).
//
// Tiles: BM = 64 x WGS rows (one warpgroup per 64), BN = 128 columns (the wgmma n). Each warpgroup's
// accumulator layout is mma.m16n8's per warp (warp w: rows 16 w + g and 16 w + g + 8; n8 block j:
// columns 8 j + 2t and 8 j + 2t + 1), so the epilogue is the mma.sync kernel's.
// Shared layout: wgmma's K-major tiles in 128-byte swizzle mode, [rows][32 floats] on 1024-byte
// boundaries, chunk c of row r at chunk position c ^ (r % 8) (wgmma_layout.hpp, checked on the CPU
// by the linear conformance test); the X tile uses the same swizzle (its float4 loads are then free
// of bank conflicts).
#include <cstdint>
#include <limits>

#include "cuda/ops/linear_launch.cuh"  // Params, split_tf32, smem_u32, the launch helpers
#include "cuda/sm90a/linear_wgmma.cuh"     // BN, the weight's split, the epilogue
#include "cuda/sm90a/tma.cuh"              // X and W by TMA, counted on shared barriers
#include "cuda/sm90a/wgmma.cuh"            // the wgmma instruction and its fences
#include "cuda/sm90a/wgmma_layout.hpp"     // chunk_at, slice_column, tile_desc
#include "cuda/waves.hpp"                  // wave_fill
#include "ops/linear/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::cuda::linear_wgmma {
namespace {

using tessera::cuda::linear::smem_u32;
constexpr int kStages = 2;

template <int WGS>
struct Tile {
  static constexpr int BM = 64 * WGS, kThreads = 128 * WGS;
  static constexpr int kA = BM * kBK, kB = BN * kBK, kStage = kA + 2 * kB;  // floats: X, W hi, W lo
  // + alignment, the stages' barriers, the tile's bias
  static constexpr int smem_bytes = kStages * kStage * int(sizeof(float)) + 1024 + 8 * kStages + 4 * BN;
};

using wgmma_layout::chunk_at;
using wgmma_layout::slice_column;
using wgmma_layout::tile_desc_lo;

// W split into tf32 parts in the stages' layout (split_weight in linear_wgmma.cuh); with a second
// input, W2's columns follow W's from kp1 (W's K rounded up to whole steps) on.
__global__ void split_weight_kernel(const float* __restrict__ w, int64_t ldw, int n, int k, bool wt,
                                    const float* __restrict__ w2, int64_t ldw2, int k2, int kp1,
                                    uint32_t* __restrict__ split, int np, int kp) {
  // 32-bit index arithmetic (the launcher checks np kp < 2^31): 64-bit divisions by the run-time
  // np and kp made this kernel 4.6-5.8 us per PubMed-sized weight (h200_20261203g call 1).
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= np * kp) return;
  // Consecutive threads read consecutive addresses of W: along K as stored, along N with wt.
  const int row = wt ? i % np : i / kp, c = wt ? i / np : i % kp;  // c: K-major column
  const int q = c % kBK, col = c - q + slice_column(q / 8, q % 8);
  float v = 0.f;
  if (row < n && col < k) v = wt ? w[int64_t(col) * ldw + row] : w[int64_t(row) * ldw + col];
  else if (row < n && col >= kp1 && col - kp1 < k2) v = w2[int64_t(row) * ldw2 + (col - kp1)];
  uint32_t h, l;
  tessera::cuda::split_tf32(v, h, l);
  uint32_t* block = split + (int64_t(row / BN) * (kp / kBK) + c / kBK) * (2 * BN * kBK);
  const int at = chunk_at(row % BN, q / 4) + q % 4;
  block[at] = h;
  block[BN * kBK + at] = l;
}

template <int WGS, bool RES>
__global__ void __launch_bounds__(Tile<WGS>::kThreads, 2)
    linear_wgmma_kernel(const Params p, const __grid_constant__ CUtensorMap x_map,
                        const __grid_constant__ CUtensorMap x2_map, const float* __restrict__ w_split, int kp) {
#ifdef TESSERA_HAVE_WGMMA_CODE
  using namespace tessera::cuda::wgmma;
  using T = Tile<WGS>;
  constexpr int BM = T::BM, S = kStages;
  extern __shared__ float smem_raw[];
  // The stages as 32-bit shared addresses (bytes), 1024-byte aligned for the swizzle; one barrier a
  // stage after them.
  const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
  constexpr uint32_t kStageBytes = T::kStage * 4, kABytes = T::kA * 4, kBBytes = T::kB * 4;
  const uint32_t bars = sbase + S * kStageBytes;

  const int m0 = int(blockIdx.x / unsigned(p.n_tiles)) * BM;  // TMA coordinates are 32-bit (launch checks)
  const int n0 = int(blockIdx.x % unsigned(p.n_tiles)) * BN, k_steps = kp / kBK;
  const int tid = threadIdx.x;
  const int x0 = n0 / p.nb * p.k;  // the tile's head's first column of X (0 without heads)

  // Step ks into slot ks % S, by thread 0 alone: X's 32-wide column box of the tile's rows (the TMA
  // swizzles it as chunk_at and zero-fills rows past M and columns past X's width), or X2's from step
  // x_steps on, and the step's W block (split_weight_kernel: whole tiles, contiguous).
  auto fetch = [&](int ks) {
    const uint32_t st = sbase + (ks % S) * kStageBytes, bar = bars + 8 * (ks % S);
    tessera::cuda::tma::arrive_expect_bytes(bar, kStageBytes);
    if (ks < p.x_steps) tessera::cuda::tma::load_box(st, x_map, x0 + ks * kBK, m0, bar);
    else tessera::cuda::tma::load_box(st, x2_map, (ks - p.x_steps) * kBK, m0, bar);
    tessera::cuda::tma::load_bytes(st + kABytes, w_split + (int64_t(n0) * kp + int64_t(ks) * BN * kBK) * 2, 2 * kBBytes,
                                   bar);
  };
  if (tid == 0) {
    for (int s = 0; s < S; ++s) tessera::cuda::tma::barrier_init(bars + 8 * s, 1);
    tessera::cuda::tma::barrier_init_fence();
  }
  const uint32_t sbias = bars + 8 * S;  // the tile's BN bias values (zeros past N or without bias)
  if (tid < BN) st_shared_f32(sbias + 4 * tid, p.bias && n0 + tid < p.n ? p.bias[n0 + tid] : 0.f);
  __syncthreads();
  if (tid == 0)
    for (int s = 0; s < S - 1 && s < k_steps; ++s) fetch(s);

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;

  const int wg = tid >> 7, lane = tid & 31, warp = (tid >> 5) & 3, g = lane >> 2, t = lane & 3;
  const int arow = wg * 64 + warp * 16 + g;  // this lane's A rows: arow and arow + 8 of the tile
  // Byte offset of chunk 2t of row arow (arow % 8 == g): chunk 2t + c of row arow + 8 h lies at
  // + 1024 h, with c flipping the swizzled chunk's lowest bit.
  const uint32_t afrag = 4 * chunk_at(arow, 2 * t);
#pragma unroll 1
  for (int ks = 0; ks < k_steps; ++ks) {
    tessera::cuda::tma::barrier_wait(bars + 8 * (ks % S), (ks / S) & 1);  // step ks landed
    __syncthreads();  // every warpgroup is past step ks - 1's products (waited below): its slot is free
    if (tid == 0 && ks + S - 1 < k_steps) fetch(ks + S - 1);
    const uint32_t st = sbase + (ks % S) * kStageBytes;
    // Columns 8t .. 8t + 7 of rows arow, arow + 8: slice s takes columns 8t + 2s (position t) and
    // 8t + 2s + 1 (position t + 4), as slice_column orders W.
    uint32_t ah[4][4], al[4][4];  // a0 (arow, t), a1 (arow + 8, t), a2 (arow, t + 4), a3 (arow + 8, t + 4)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int c = 0; c < 2; ++c) {  // split each chunk as it lands: 4 live floats, not 16
        const float4 f = ld_shared_f4(st + ((afrag + 1024 * h) ^ (16 * c)));
        tessera::cuda::split_tf32(f.x, ah[2 * c][h], al[2 * c][h]);
        tessera::cuda::split_tf32(f.y, ah[2 * c][h + 2], al[2 * c][h + 2]);
        tessera::cuda::split_tf32(f.z, ah[2 * c + 1][h], al[2 * c + 1][h]);
        tessera::cuda::split_tf32(f.w, ah[2 * c + 1][h + 2], al[2 * c + 1][h + 2]);
      }
    const uint32_t bh = tile_desc_lo(st + kABytes), bl = tile_desc_lo(st + kABytes + kBBytes);
    pin(acc);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < kBK / 8; ++s) {  // k-slice s: +32 s bytes = +2 s in the start field
      wgmma_m64n128k8_rs(acc, al[s], bh + 2 * s);  // small terms first
      wgmma_m64n128k8_rs(acc, ah[s], bl + 2 * s);
      wgmma_m64n128k8_rs(acc, ah[s], bh + 2 * s);
    }
    wgmma_commit();
    wgmma_wait_all();
    pin(acc);
  }

  // The tile's corner again from blockIdx: nothing of the loop's stays live past it.
  store_tile<RES>(p, acc, sbias, (int64_t(blockIdx.x) / p.n_tiles) * BM + arow,
                  int(int64_t(blockIdx.x) % p.n_tiles) * BN + 2 * t, t);
#else
  __trap();  // built without sm_90a code; linear_wgmma_eligible keeps launches away
#endif
}

template <int WGS, bool RES>
void launch(const ops::LinearArgs& a, cudaStream_t s, const float* w_split, int kp) {
  using T = Tile<WGS>;
  constexpr auto kernel = &linear_wgmma_kernel<WGS, RES>;
  tessera::cuda::linear::opt_in_shared<kernel>(T::smem_bytes);
  int64_t tiles = 0;
  const Params p = tessera::cuda::linear::params_for(a, T::BM, BN, tiles);
  if (tiles == 0) return;
  const CUtensorMap x_map = x_boxes(p, T::BM);  // without K: no loads, Y is the bias (and R)
  const CUtensorMap x2_map =
      p.k2 > 0 ? tessera::cuda::tma::map_2d(p.x2, p.m, p.k2, p.ldx2, T::BM, kBK) : CUtensorMap{};
  kernel<<<unsigned(tiles), T::kThreads, T::smem_bytes, s>>>(p, x_map, x2_map, w_split, kp);
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace

namespace {
int padded(int64_t k) { return int((k + kBK - 1) / kBK * kBK); }
// W's K and W2's, each rounded up to whole steps.
int padded_k(const ops::LinearArgs& a) { return padded(a.k()) + padded(a.X2.cols); }
int padded_n(const ops::LinearArgs& a) { return int((a.n() + BN - 1) / BN * BN); }
}  // namespace

namespace {
// Queues split_weight_kernel: W (n x k, or k x n with wt) and W2 (n x k2) into split (np x kp).
void write_split(const float* w, int64_t ldw, int n, int k, bool wt, const float* w2, int64_t ldw2, int k2,
                 uint32_t* split, int np, int kp, cudaStream_t s) {
  TESSERA_CHECK(int64_t(np) * kp < (int64_t(1) << 31), "linear: a ", n, " x ", kp, " weight is too large for the wgmma tiles");
  if (kp == 0) return;
  const int count = np * kp;
  split_weight_kernel<<<unsigned((count + 255) / 256), 256, 0, s>>>(w, ldw, n, k, wt, w2, ldw2, k2, padded(k), split,
                                                                      np, kp);
  TESSERA_CUDA_LAUNCH_CHECK();
}
}  // namespace

SplitWeight::SplitWeight(const ops::LinearArgs& a, const Exec& exec) : kp(padded_k(a)) {
  if (a.w_split != nullptr) {  // validate_linear checked it is a plain W's, of this shape
    split = static_cast<const float*>(a.w_split);
    return;
  }
  const int np = padded_n(a);
  owned = std::make_unique<Scratch>(exec, 2 * size_t(np) * size_t(kp) * sizeof(float));
  split = owned->as<const float>();
  write_split(a.W.as<const float>(), a.W.ld, int(a.n()), int(a.k()), a.w_transposed,
              a.has_x2() ? a.W2.as<const float>() : nullptr, a.W2.ld, int(a.X2.cols), owned->as<uint32_t>(), np, kp,
              tessera::cuda_stream(exec.stream));
}

CUtensorMap x_boxes(const Params& p, int box_rows) {
  TESSERA_CHECK(p.m <= std::numeric_limits<int32_t>::max() - box_rows, "linear: ", p.m,
                " rows are too many for the wgmma tiles' 32-bit TMA coordinates");
  return p.k > 0 ? tessera::cuda::tma::map_2d(p.x, p.m, p.x_cols, p.ldx, box_rows, kBK) : CUtensorMap{};
}

}  // namespace tessera::cuda::linear_wgmma

namespace tessera::ops::detail {

bool linear_wgmma_eligible(const LinearArgs& a) {
  // The mma.sync kernel's operand rules (16-byte chunks of X and W along K, float2 stores of Y), on
  // a compute capability 9.0 device.
  // X's rows are TMA coordinates, 32-bit.
  // Heads: a tile within one head (N / blocks a multiple of BN) and X's boxes within its block
  // (K a multiple of a step). A second input: X's operand rules for X2 and W2.
  namespace lw = tessera::cuda::linear_wgmma;
  using tessera::cuda::linear::aligned;
  const bool heads = a.blocks == 1 || (a.k() % lw::kBK == 0 && (a.n() / a.blocks) % lw::BN == 0);
  const bool x2 = !a.has_x2() || (a.X2.cols % 4 == 0 && a.X2.ld % 4 == 0 && a.W2.ld % 4 == 0 &&
                                  aligned(a.X2.data, 16) && aligned(a.W2.data, 16));
  return linear_operands_fit(a) && heads && x2 && a.X.rows <= std::numeric_limits<int32_t>::max() - 128 &&
         cuda_compute_capability(a.Y.device.index) == 90;
}

int linear_wgmma_preferred(const LinearArgs& a, int device_index) {
  // H200, GPU time per call from CUDA graphs (bench/results/h200_20261203g/probe_*.txt): the wgmma
  // tiles run 67-105 TFLOP/s where the mma.sync tiles ran 47-57.
  // - Grids of under half a tile of 128 x 128 per multiprocessor: the mma.sync tiles (2708 x 128 ->
  //   256, 44 tiles: 7.8 us against 10.1; the weight's split is a launch of its own).
  // - Otherwise the wgmma tile whose last wave is fuller (2 CTAs a multiprocessor), 128 rows unless
  //   64 fills the machine better by more than 10%: 19717 x 128 -> 256 (310 tiles of 128) 27.1 us
  //   with 64 rows against 31.3; 2708 x 128 -> 1024 (176 tiles) 16.5 against 19.9; 1048576 x 128 ->
  //   512 1903 against 2124. At 2^20 rows both are within 1%.
  namespace lw = tessera::cuda::linear_wgmma;
  const int64_t sms = cuda_multiprocessors(device_index), slots = 2 * sms;
  const int64_t n_tiles = (a.n() + lw::BN - 1) / lw::BN;
  const int64_t t128 = ((a.X.rows + 127) / 128) * n_tiles, t64 = ((a.X.rows + 63) / 64) * n_tiles;
  if (2 * t128 < sms) return 0;
  return tessera::cuda::wave_fill(t64, slots) > 1.1 * tessera::cuda::wave_fill(t128, slots) ? 1 : 2;
}

namespace {
LinearArgs weights_only(const DenseView& W, const DenseView& W2) {  // what the split reads of a call's args
  LinearArgs a;
  a.W = W;
  a.W2 = W2;
  a.X2.cols = W2.cols;
  return a;
}
}  // namespace

size_t linear_wgmma_split_bytes(const DenseView& W, const DenseView& W2) {
  namespace lw = tessera::cuda::linear_wgmma;
  if (cuda_compute_capability(W.device.index) != 90) return 0;
  const LinearArgs a = weights_only(W, W2);
  return 2 * size_t(lw::padded_n(a)) * size_t(lw::padded_k(a)) * sizeof(float);
}

void linear_wgmma_split_weight(const DenseView& W, const DenseView& W2, void* out, const Exec& exec) {
  namespace lw = tessera::cuda::linear_wgmma;
  const LinearArgs a = weights_only(W, W2);
  lw::write_split(W.as<const float>(), W.ld, int(W.rows), int(W.cols), false,
                  W2.cols > 0 ? W2.as<const float>() : nullptr, W2.ld, int(W2.cols), static_cast<uint32_t*>(out),
                  lw::padded_n(a), lw::padded_k(a), cuda_stream(exec.stream));
}

void linear_wgmma_cuda(const LinearArgs& a, const Exec& exec, int warpgroups) {
  namespace lw = tessera::cuda::linear_wgmma;
  const cudaStream_t s = cuda_stream(exec.stream);
  const lw::SplitWeight w(a, exec);
  const bool res = a.R.data != nullptr;
  if (warpgroups == 1)
    return res ? lw::launch<1, true>(a, s, w.data(), w.kp) : lw::launch<1, false>(a, s, w.data(), w.kp);
  return res ? lw::launch<2, true>(a, s, w.data(), w.kp) : lw::launch<2, false>(a, s, w.data(), w.kp);
}

}  // namespace tessera::ops::detail
