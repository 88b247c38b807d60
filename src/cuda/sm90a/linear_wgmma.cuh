#pragma once
// What the two wgmma projections share (linear_wgmma.cu streams W through its stages,
// linear_wgmma_resident.cu keeps one n-tile of it in shared memory): the n-tile width, W's split
// copy and the epilogue that writes a warpgroup's 64 x 128 accumulator.
#include <cstdint>
#include <memory>

#include "cuda/ops/linear_launch.cuh"  // Params, kBK
#include "cuda/sm90a/tma.cuh"    // CUtensorMap
#include "cuda/sm90a/wgmma.cuh"
#include "tessera/core/device.hpp"
#include "tessera/ops/linear.hpp"

namespace tessera::cuda::linear_wgmma {

using tessera::cuda::linear::kBK;  // floats of K per step: one 128-byte swizzled row
using tessera::cuda::linear::Params;
constexpr int BN = 128;            // the wgmma n: columns of Y per tile

// W (N x K, or K x N with w_transposed) split into tf32 hi and lo parts, laid out as the kernels'
// shared stages are: for n-tile nt and step ks, block nt * (kp / 32) + ks is [BN][32] hi then
// [BN][32] lo, swizzled (wgmma_layout::chunk_at), so one step of one n-tile is a contiguous 32 KB
// and one n-tile's whole K is contiguous too. Rows past N and columns past K are zeros; each step's
// columns are in wgmma_layout::slice_column order. Built by the constructor, queued on exec's
// stream into scratch from exec's allocator (stream-ordered: free to reuse once the product queued
// after it has run), or the caller's (LinearArgs::w_split, validated against W's shape).
struct SplitWeight {
  SplitWeight(const ops::LinearArgs& a, const Exec& exec);
  int kp;                          // K rounded up to whole steps of kBK
  std::unique_ptr<Scratch> owned;  // 2 x N rounded up to BN x kp tf32 values, unless the caller's
  const float* split = nullptr;
  const float* data() const { return split; }
};

// X's TMA map in boxes of box_rows x kBK (zero-filled past M and K), after checking that its rows
// fit the 32-bit TMA coordinates; none is needed (an empty map) without K.
CUtensorMap x_boxes(const Params& p, int box_rows);

#ifdef TESSERA_HAVE_WGMMA_CODE
// Writes a warpgroup's accumulator as Y rows row0, row0 + 8 (this lane's: warp w of the group holds
// rows 16 w + g and 16 w + g + 8 of its 64) and columns col0 + 8 j (+ 1), j < 16: acc[4 j + 2 h + e]
// is (row g + 8 h, column 8 j + 2 t + e). The bias comes from the tile's BN values in shared memory
// at sbias (zeros past N or without bias), R (RES) is read in groups of 4 j ahead of their stores:
// Y's stores may alias the bias and R as far as the compiler knows, so a global load after a store
// waits a full round trip, and one per j was 16 in a row (bench/results/h200_20261204b).
template <bool RES>
__device__ __forceinline__ void store_tile(const Params& p, const float (&acc)[BN / 2], uint32_t sbias, int64_t row0,
                                           int col0, int t) {
  constexpr int G = 4;
#pragma unroll
  for (int j0 = 0; j0 < BN / 8; j0 += G) {
    float2 r[G][2];
#pragma unroll
    for (int j = 0; j < G; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        r[j][h] = make_float2(0.f, 0.f);
        const int col = col0 + 8 * (j0 + j);
        const int64_t row = row0 + 8 * h;
        if (RES && col < p.n && row < p.m) r[j][h] = *reinterpret_cast<const float2*>(p.r + row * p.ldr + col);
      }
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const int col = col0 + 8 * (j0 + j);
      if (col >= p.n) continue;  // N even: col + 1 < N too
      const float2 b = tessera::cuda::wgmma::ld_shared_f2(sbias + 4 * (8 * (j0 + j) + 2 * t));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = row0 + 8 * h;
        const int i = 4 * (j0 + j) + 2 * h;
        if (row < p.m)
          *reinterpret_cast<float2*>(p.y + row * p.ldy + col) =
              make_float2(acc[i] + b.x + r[j][h].x, acc[i + 1] + b.y + r[j][h].y);
      }
    }
  }
}
#endif

}  // namespace tessera::cuda::linear_wgmma
