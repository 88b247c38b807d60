// The fp32 projection Y = X W^T (+ b) (+ R) for K <= 128 with one n-tile of the split weight resident
// in shared memory: a persistent CTA a multiprocessor streams X alone. The LinearArgs contract of
// tessera/ops/linear.hpp; sm_90a only, like linear_wgmma.cu (the same three tf32 products, the same
// split of W and of X, the same error bound).
//
// Why: the layers' projections have K = 128 (the input width) and are most of a GATv2 or Graph
// Transformer forward on the large graphs (grid Transformer 8x128: ~15 of 21 ms). The streaming
// kernel (linear_wgmma.cu) reloads a 32 KB W block with every 16 KB of X, waits for all of a step's
// products before the next step, and relies on its second CTA to cover its epilogue: ncu at
// 2^20 x 128 -> 512 put the tensor pipe at 60% and the CTA barrier first among the stalls
// (bench/results/h200_20261204b). Here:
// - W's n-tile (hi and lo, 2 x 128 x Kp floats, <= 128 KB) is loaded once per CTA by one bulk copy;
//   the grid is whole groups of n_tiles CTAs, so a CTA keeps its n-tile for its whole life, and the
//   n_tiles CTAs of a group read the same rows of X at about the same time (from L2 after the first).
// - Each warpgroup owns 64-row tiles and one shared slot for a tile's whole K (<= 32 KB), filled by
//   the TMA. X goes through registers (the RS form), so the slot is free once the last step's
//   fragments are loaded: the next tile's load is issued then, under this tile's products and
//   epilogue. No CTA-wide barrier in the loop.
// - A step's products run while the next step's fragments are loaded and split (two register
//   buffers, wgmma.wait_group 1).
// - Two warpgroups (226-237 registers a thread). Three would have 168 registers, and ptxas then
//   serializes the wgmmas ("insufficient register resources for the wgmma pipeline"), with one A
//   buffer as with two.
// - The warpgroups issue their products in turn (named barriers in a ring), so one warpgroup's
//   epilogue runs under the next one's products; without an order they settle into the same phase
//   and leave the tensor pipe idle during the epilogues together.
// Measured (H100, bench/results/h100_20261205c): 1.22-1.51x the streaming kernel at K = 128; at
// 2^20 x 128 -> 512 1303 us against 1707, the tensor pipe 83.5% busy at the loaded clock (1.64 GHz).
#include <algorithm>
#include <cstdint>

#include "cuda/ops/linear_launch.cuh"  // Params, split_tf32, smem_u32, the launch helpers
#include "cuda/sm90a/linear_wgmma.cuh"     // BN, the weight's split, the epilogue
#include "cuda/sm90a/tma.cuh"              // X and W by TMA, counted on shared barriers
#include "cuda/sm90a/wgmma.cuh"            // the wgmma instruction, its fences, named barriers
#include "cuda/sm90a/wgmma_layout.hpp"     // chunk_at, tile_desc_lo
#include "ops/linear/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::cuda::linear_wgmma {
namespace {

using tessera::cuda::linear::smem_u32;
using wgmma_layout::chunk_at;
using wgmma_layout::tile_desc_lo;

constexpr int WGS = 2;                          // warpgroups a CTA
constexpr int kMaxK = 128;                      // W's n-tile must fit: 2 x 128 x 128 x 4 bytes = 128 KB
constexpr int kRows = 64;                       // rows of a warpgroup's tile (the wgmma m)
constexpr uint32_t kStepW = 2 * BN * kBK * 4;   // bytes of one step of W: hi and lo, 32 KB
constexpr uint32_t kStepX = kRows * kBK * 4;    // bytes of one step of a warpgroup's X tile: 8 KB

// Dynamic shared memory: alignment slack, W's n-tile, one X slot a warpgroup, the barriers (W, then
// one a warpgroup), the tile's bias.
constexpr int smem_bytes(int kp) { return 1024 + (kp / kBK) * int(kStepW + WGS * kStepX) + 8 * (1 + WGS) + 4 * BN; }
static_assert(smem_bytes(kMaxK) <= 227 * 1024, "K = 128 must fit a multiprocessor");

template <bool RES>
__global__ void __launch_bounds__(128 * WGS, 1)
    resident_kernel(const Params p, const __grid_constant__ CUtensorMap x_map, const float* __restrict__ w_split,
                    int kp, int m_tiles) {
#ifdef TESSERA_HAVE_WGMMA_CODE
  using namespace tessera::cuda::wgmma;
  namespace tma = tessera::cuda::tma;
  extern __shared__ float smem_raw[];
  const int k_steps = kp / kBK;
  const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;  // W, 1024-byte aligned for the swizzle
  const uint32_t w_bytes = uint32_t(k_steps) * kStepW, x_bytes = uint32_t(k_steps) * kStepX;
  // wg through a shuffle: ptxas then knows it is warp-uniform, and so are the branches on it around
  // the wgmmas (otherwise it serializes them: "WG.DP in divergent path").
  const int tid = int(threadIdx.x), wg = __shfl_sync(0xffffffffu, tid >> 7, 0), wtid = tid & 127;
  const uint32_t xslot = sbase + w_bytes + uint32_t(wg) * x_bytes;
  const uint32_t w_bar = sbase + w_bytes + WGS * x_bytes, x_bar = w_bar + 8 * (1 + wg);
  const uint32_t sbias = w_bar + 8 * (1 + WGS);

  // CTA c keeps n-tile c % n_tiles and belongs to group c / n_tiles; warpgroup wg of group grp takes
  // the 64-row m-tiles grp WGS + wg + i stride.
  const int n_tiles = int(p.n_tiles), nt = int(blockIdx.x) % n_tiles, grp = int(blockIdx.x) / n_tiles;
  const int stride = int(gridDim.x) / n_tiles * WGS, first = grp * WGS + wg;
  const int iters = (m_tiles - grp * WGS + stride - 1) / stride;  // warpgroup 0's tiles, the most of any

  if (tid == 0) {
    for (int b = 0; b <= WGS; ++b) tma::barrier_init(w_bar + 8 * b, 1);
    tma::barrier_init_fence();
  }
  if (tid < BN) st_shared_f32(sbias + 4 * tid, p.bias && nt * BN + tid < p.n ? p.bias[nt * BN + tid] : 0.f);
  __syncthreads();
  // A tile's X (its whole K, as k_steps boxes of 64 x 32: the TMA swizzles them as chunk_at and
  // zero-fills rows past M and columns past K), by the warpgroup's thread 0.
  auto fetch_x = [&](int mt) {
    tma::arrive_expect_bytes(x_bar, x_bytes);
    for (int ks = 0; ks < k_steps; ++ks) tma::load_box(xslot + ks * kStepX, x_map, ks * kBK, mt * kRows, x_bar);
  };
  if (tid == 0) {
    tma::arrive_expect_bytes(w_bar, w_bytes);
    tma::load_bytes(sbase, w_split + int64_t(nt) * kp * BN * 2, w_bytes, w_bar);
  }
  if (wtid == 0 && first < m_tiles) fetch_x(first);

  const int lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int arow = ((wtid >> 5) * 16) + g;  // this lane's A rows: arow and arow + 8 of the tile
  // Byte offset of chunk 2t of row arow (arow % 8 == g); chunk 2t + c of row arow + 8 h lies at
  // + 1024 h, with c flipping the swizzled chunk's lowest bit (as in linear_wgmma.cu).
  const uint32_t afrag = 4 * chunk_at(arow, 2 * t);
  // Barrier 1 + w: "warpgroup w may issue its products", passed on by warpgroup w - 1 once its own
  // are issued; warpgroup 0 goes first. Barrier 1 + WGS + w: warpgroup w alone.
  if (wg == WGS - 1) named_arrive(1, 256);
  tma::barrier_wait(w_bar, 0);
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    const int mt = first + i * stride;
    const bool mine = mt < m_tiles;  // the last round may have no tile for the later warpgroups
    float acc[BN / 2];
#pragma unroll
    for (int e = 0; e < BN / 2; ++e) acc[e] = 0.f;
    named_sync(1 + wg, 256);
    if (mine) {
      tma::barrier_wait(x_bar, uint32_t(i & 1));
      uint32_t ah[2][4][4], al[2][4][4];  // [buffer][k-slice][a0..a3], as linear_wgmma.cu's
#pragma unroll
      for (int ks = 0; ks < kMaxK / kBK; ++ks) {
        if (ks >= k_steps) break;
        const int b = ks & 1;
        if (ks >= 2) wgmma_wait<1>();  // step ks - 2's products, which read buffer b, are done
        const uint32_t st = xslot + uint32_t(ks) * kStepX;
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const float4 f = ld_shared_f4(st + ((afrag + 1024 * h) ^ (16 * c)));
            tessera::cuda::split_tf32(f.x, ah[b][2 * c][h], al[b][2 * c][h]);
            tessera::cuda::split_tf32(f.y, ah[b][2 * c][h + 2], al[b][2 * c][h + 2]);
            tessera::cuda::split_tf32(f.z, ah[b][2 * c + 1][h], al[b][2 * c + 1][h]);
            tessera::cuda::split_tf32(f.w, ah[b][2 * c + 1][h + 2], al[b][2 * c + 1][h + 2]);
          }
        const uint32_t wst = sbase + uint32_t(ks) * kStepW;
        const uint32_t bh = tile_desc_lo(wst), bl = tile_desc_lo(wst + kStepW / 2);
        pin(acc);
        wgmma_fence();
#pragma unroll
        for (int s = 0; s < kBK / 8; ++s) {  // k-slice s: +32 s bytes = +2 s in the start field
          wgmma_m64n128k8_rs(acc, al[b][s], bh + 2 * s);  // small terms first
          wgmma_m64n128k8_rs(acc, ah[b][s], bl + 2 * s);
          wgmma_m64n128k8_rs(acc, ah[b][s], bh + 2 * s);
        }
        wgmma_commit();
      }
      // Every step's X is in registers: the slot takes this warpgroup's next tile.
      named_sync(1 + WGS + wg, 128);
      if (wtid == 0 && mt + stride < m_tiles) fetch_x(mt + stride);
    }
    // The turn passes on, except the last warpgroup's last (warpgroup 0 has no round after it).
    if (wg != WGS - 1 || i != iters - 1) named_arrive(1 + (wg + 1) % WGS, 256);
    if (mine) {
      wgmma_wait_all();
      pin(acc);
      store_tile<RES>(p, acc, sbias, int64_t(mt) * kRows + arow, nt * BN + 2 * t, t);
    }
  }
#else
  __trap();  // built without sm_90a code; linear_wgmma_resident_eligible keeps launches away
#endif
}

template <bool RES>
void launch(const ops::LinearArgs& a, cudaStream_t s, const float* w_split, int kp) {
  constexpr auto kernel = &resident_kernel<RES>;
  tessera::cuda::linear::opt_in_shared<kernel>(smem_bytes(kMaxK));
  int64_t tiles = 0;
  const Params p = tessera::cuda::linear::params_for(a, kRows, BN, tiles);
  if (tiles == 0) return;
  const int64_t m_tiles = (p.m + kRows - 1) / kRows;
  // Whole groups of n_tiles CTAs, at most one CTA a multiprocessor, none without a tile.
  const int64_t groups = std::min<int64_t>(cuda_multiprocessors(a.Y.device.index) / p.n_tiles, (m_tiles + WGS - 1) / WGS);
  const CUtensorMap x_map = x_boxes(p, kRows);
  kernel<<<unsigned(groups * p.n_tiles), 128 * WGS, smem_bytes(kp), s>>>(p, x_map, w_split, kp, int(m_tiles));
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace
}  // namespace tessera::cuda::linear_wgmma

namespace tessera::ops::detail {

bool linear_wgmma_resident_eligible(const LinearArgs& a) {
  // The streaming kernel's rules, K within one resident n-tile and whole groups of n-tiles on the
  // machine; neither heads nor a second input.
  namespace lw = tessera::cuda::linear_wgmma;
  return a.plain() && linear_wgmma_eligible(a) && a.X.cols >= 1 && a.X.cols <= lw::kMaxK &&
         (a.n() + lw::BN - 1) / lw::BN <= cuda_multiprocessors(a.Y.device.index);
}

bool linear_wgmma_resident_preferred(const LinearArgs& a, int device_index) {
  // Wherever the 64-row tiles give every multiprocessor one at least. H100 (bench/results/
  // h100_20261205c, probe): 1.22-1.51x the streaming tile from 2708 x 128 -> 1024 (344 tiles) to
  // 2^20 rows; at 2708 x 128 -> 256 (86 tiles) the 64-row streaming tile wins, 7.7 us against 9.0.
  namespace lw = tessera::cuda::linear_wgmma;
  const int64_t tiles = (a.X.rows + lw::kRows - 1) / lw::kRows * ((a.n() + lw::BN - 1) / lw::BN);
  return tiles >= cuda_multiprocessors(device_index);
}

void linear_wgmma_resident_cuda(const LinearArgs& a, const Exec& exec) {
  namespace lw = tessera::cuda::linear_wgmma;
  const cudaStream_t s = cuda_stream(exec.stream);
  const lw::SplitWeight w(a, exec);
  return a.R.data != nullptr ? lw::launch<true>(a, s, w.data(), w.kp) : lw::launch<false>(a, s, w.data(), w.kp);
}

}  // namespace tessera::ops::detail
