#pragma once
// Device code of the fp32 dense projection Y = X W^T (+ b) on the tensor cores as three tf32
// products (launchers in linear.cu).
//
// Why: the layers' fp32 projections are the largest single cost of a GCN or Graph Transformer
// forward on big graphs (grid 2^20 at width 256: cuBLAS's fp32 SGEMM 3.0 ms of a 3.9 ms layer),
// and cuBLAS runs them on the CUDA cores (~46 TFLOP/s; its fp32 emulation targets Blackwell, its
// tf32 is 500x less accurate). Each operand x = x_hi + x_lo (split_tf32 in tf32_mma.cuh: both tf32), and
// x w = x_lo w_hi + x_hi w_lo + x_hi w_hi: three mma.m16n8k8 into fp32 accumulators, the x_lo w_lo
// term (<= 2^-22 relative) dropped. A product is then within 2^-19.6 (typically ~2^-22) of exact,
// unbiased, so a K-term dot product carries fp32 SGEMM's accumulated rounding, not tf32's 2^-11.
//
// Tiling: a CTA computes a BM x BN tile of Y with WM x WN warps (warp tile 16 MT x 8 NT); K in
// steps of 32 through a kStages-deep cp.async pipeline of row-major X and W tiles (both K-major:
// the "TN" product). Inside a 32-wide k-step the mma's k index is permuted, k -> column
// 2 (k % 4) + k / 4 of its 8-column group, for A and B alike (k only indexes the sum): a lane's two
// elements of a fragment row (k = t and t + 4) are then adjacent, one 8-byte shared load.
// Shared rows are 32 floats (128 bytes) with the 16-byte chunks of row r XOR-swizzled by
// 2 (r % 4): the 16 lanes of a half-warp (rows g = 0..3, chunks 2s + t / 2) then read 16 distinct
// bank pairs, and a quarter-warp's cp.async chunks fill one row.
//
// WT (LinearArgs::w_transposed, W stored K x N: Y = X W, a Linear's dX = dY W): W's stage is its
// rows k0 .. k0 + 31 as they lie, [32][BN + 4] (cp.async chunks along N, no transpose), and a lane
// reads b0, b1 (rows 2 (k % 4) + k / 4 of the permuted k-step, column n) with two 4-byte loads; the
// row stride BN + 4 = 4 (mod 32 banks) puts the warp's 32 (t, g) pairs on 32 distinct banks.
//
// Requirements (the launcher checks them): K % 4 == 0, N % 2 == 0 (N % 4 == 0 with WT), row
// strides multiples of 4 floats and 16-byte aligned X and W (the cp.async chunks), 8-byte aligned
// Y and its stride even. Rows of X past M, W entries past N or K are zero-filled; stores are masked.
#include <cstdint>

#include "cuda/ops/tf32_mma.cuh"  // split_tf32, mma_k8_tf32

namespace tessera::cuda::linear {

constexpr int kBK = 32;     // floats of K per pipeline stage (one 128-byte shared row)
constexpr int kStages = 3;  // cp.async stages in flight
constexpr int kPadWT = 4;   // floats of padding per row of a WT stage of W (see above)

// Floats of one pipeline stage of W: [BN][32] (swizzled), or [32][BN + kPadWT] for WT.
template <int BN, bool WT>
constexpr int w_stage_floats() {
  return WT ? kBK * (BN + kPadWT) : BN * kBK;
}

struct Params {
  const float* x = nullptr;     // M x K, row stride ldx
  const float* w = nullptr;     // N x K, row stride ldw
  const float* bias = nullptr;  // N or nullptr
  float* y = nullptr;           // M x N, row stride ldy
  const float* r = nullptr;     // M x N residual (row stride ldr) added last, or nullptr; may be y
  int64_t m = 0, ldx = 0, ldw = 0, ldy = 0, ldr = 0;
  int n = 0, k = 0;
  int64_t n_tiles = 0;          // ceil(N / BN): CTA t takes n-tile t % n_tiles of m-tile t / n_tiles
  // Heads and a second input (LinearArgs::blocks, X2; the wgmma streaming kernel only): output
  // column j reads X's columns (j / nb) k .. + k of its x_cols, and the steps from x_steps on read
  // X2 (M x k2, row stride ldx2) against W2's part of the split weight.
  int nb = 0;                   // output columns per head (n without heads)
  int64_t x_cols = 0;           // X's width: blocks k
  const float* x2 = nullptr;
  int64_t ldx2 = 0;
  int k2 = 0, x_steps = 0;
};

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }


// Offset (floats) of 16-byte chunk `chunk` of shared row `row` in a [rows][32] tile.
__device__ __forceinline__ int swizzled(int row, int chunk) { return row * kBK + ((chunk ^ ((row & 3) << 1)) << 2); }

// Copies rows [0, ROWS) x columns [k0, k0 + 32) of a row-major matrix (rows past `rows`, columns
// past `k` zero-filled) into a swizzled shared tile; THREADS threads, chunk q = tid + THREADS j.
template <int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(float* s, const float* g, int64_t ld, int64_t rows, int k, int k0) {
  static_assert(ROWS * 8 % THREADS == 0, "whole chunks per thread");
#pragma unroll
  for (int j = 0; j < ROWS * 8 / THREADS; ++j) {
    const int q = int(threadIdx.x) + THREADS * j, row = q >> 3, chunk = q & 7, col = k0 + 4 * chunk;
    const bool valid = row < rows && col < k;
    cp_async16(smem_u32(s + swizzled(row, chunk)), valid ? g + row * ld + col : g, valid);
  }
}

// Copies rows [k0, k0 + 32) x columns [0, BN) of a K x N row-major W whose first column is the
// tile's n0 (rows past k, columns past n zero-filled; n % 4 == 0, so a chunk is whole or absent)
// into a [32][BN + kPadWT] shared stage; THREADS threads, chunk q = tid + THREADS j.
template <int BN, int THREADS>
__device__ __forceinline__ void load_tile_kn(float* s, const float* g, int64_t ld, int k, int n, int k0) {
  constexpr int kChunksPerRow = BN / 4;
  static_assert(kBK * kChunksPerRow % THREADS == 0, "whole chunks per thread");
#pragma unroll
  for (int j = 0; j < kBK * kChunksPerRow / THREADS; ++j) {
    const int q = int(threadIdx.x) + THREADS * j, row = q / kChunksPerRow, col = 4 * (q % kChunksPerRow);
    const bool valid = k0 + row < k && col < n;
    cp_async16(smem_u32(s + row * (BN + kPadWT) + col), valid ? g + (k0 + row) * ld + col : g, valid);
  }
}

// Where CTA `tile` works (the mma.sync and wgmma kernels alike): n-tile tile % n_tiles of m-tile
// tile / n_tiles; its rows of X and first row (or, WT, column) of W, how many of each remain, and
// the number of K steps.
template <int BM, int BN, bool WT>
struct TileOrigin {
  int64_t m0;
  int n0;
  const float* gx;
  const float* gw;
  int64_t rows_x;
  int rows_w;
  int k_steps;
  __device__ __forceinline__ TileOrigin(const Params& p, int64_t tile)
      : m0((tile / p.n_tiles) * BM),
        n0(int(tile % p.n_tiles) * BN),
        gx(p.x + m0 * p.ldx),
        gw(WT ? p.w + n0 : p.w + int64_t(n0) * p.ldw),
        rows_x(p.m - m0),
        rows_w(p.n - n0),
        k_steps((p.k + kBK - 1) / kBK) {}
};

// The bias pair of columns col, col + 1 (zeros without a bias).
__device__ __forceinline__ float2 bias_pair(const Params& p, int col) {
  return p.bias ? make_float2(p.bias[col], p.bias[col + 1]) : make_float2(0.f, 0.f);
}

// Y[row, col .. col+1] = (a0, a1) + bias (+ R): one accumulator pair of the epilogue; the caller
// masks rows past M and columns past N.
template <bool RES>
__device__ __forceinline__ void store_pair(const Params& p, int64_t row, int col, float a0, float a1, float2 b) {
  float2 v = make_float2(a0 + b.x, a1 + b.y);
  if constexpr (RES) {  // read before the write: r may be y (same thread, same element)
    const float2 r = *reinterpret_cast<const float2*>(p.r + row * p.ldr + col);
    v.x += r.x;
    v.y += r.y;
  }
  *reinterpret_cast<float2*>(p.y + row * p.ldy + col) = v;
}

// 2 CTAs per multiprocessor: at most 128 registers a thread.
// RES: the residual p.r is added in the epilogue. A compile-time switch: read at run time, its
// branch cost the 128x128 tile 4 bytes more spill and the kernel 4-7% at 2^20 rows on the H200
// (bench/results/h200_20261203), so the plain projection keeps its own instantiation.
// WT: W is K x N (see above).
template <int BM, int BN, int WM, int WN, bool RES, bool WT>
__global__ void __launch_bounds__(WM * WN * 32, 2) linear_tf32x3_kernel(const Params p) {
  constexpr int kThreads = WM * WN * 32;
  constexpr int MT = BM / WM / 16, NT = BN / WN / 8;  // m16 and n8 tiles per warp
  constexpr int kWStage = w_stage_floats<BN, WT>();
  static_assert(MT * 16 * WM == BM && NT * 8 * WN == BN, "warp tiles cover the CTA tile");
  extern __shared__ __align__(16) float smem[];
  float* sA = smem;                       // kStages x [BM][32]
  float* sB = smem + kStages * BM * kBK;  // kStages x kWStage

  const TileOrigin<BM, BN, WT> o(p, blockIdx.x);
  const int64_t m0 = o.m0, rows_x = o.rows_x;
  const int n0 = o.n0, rows_w = o.rows_w, k_steps = o.k_steps;
  const float* gx = o.gx;
  const float* gw = o.gw;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wm = warp / WN, wn = warp % WN;

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;

  auto load_w = [&](float* stage, int k0) {
    if constexpr (WT) load_tile_kn<BN, kThreads>(stage, gw, p.ldw, p.k, rows_w, k0);
    else load_tile<BN, kThreads>(stage, gw, p.ldw, rows_w, p.k, k0);
  };

  // Prologue: stages 0 .. kStages-2 in flight (one commit group each, empty past the end).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_steps) {
      load_tile<BM, kThreads>(sA + s * BM * kBK, gx, p.ldx, rows_x, p.k, s * kBK);
      load_w(sB + s * kWStage, s * kBK);
    }
    cp_async_commit();
  }

  for (int ks = 0; ks < k_steps; ++ks) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage ks landed for every thread; stage ks - 1 is free to refill
    const int next = ks + kStages - 1;
    if (next < k_steps) {
      const int st = next % kStages;
      load_tile<BM, kThreads>(sA + st * BM * kBK, gx, p.ldx, rows_x, p.k, next * kBK);
      load_w(sB + st * kWStage, next * kBK);
    }
    cp_async_commit();

    const float* a_s = sA + (ks % kStages) * BM * kBK;
    const float* b_s = sB + (ks % kStages) * kWStage;
#pragma unroll
    for (int s = 0; s < kBK / 8; ++s) {
      const int chunk = 2 * s + (t >> 1), within = 2 * (t & 1);
      uint32_t bh[NT][2], bl[NT][2];
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int row = wn * NT * 8 + j * 8 + g;  // of W's N x K view
        float2 v;
        if constexpr (WT) {  // k-step rows 8 s + 2 t and 8 s + 2 t + 1, column `row`
          v.x = b_s[(8 * s + 2 * t) * (BN + kPadWT) + row];
          v.y = b_s[(8 * s + 2 * t + 1) * (BN + kPadWT) + row];
        } else {
          v = *reinterpret_cast<const float2*>(b_s + swizzled(row, chunk) + within);
        }
        split_tf32(v.x, bh[j][0], bl[j][0]);
        split_tf32(v.y, bh[j][1], bl[j][1]);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int row = wm * MT * 16 + i * 16 + g;
        const float2 v0 = *reinterpret_cast<const float2*>(a_s + swizzled(row, chunk) + within);
        const float2 v1 = *reinterpret_cast<const float2*>(a_s + swizzled(row + 8, chunk) + within);
        uint32_t ah[4], al[4];  // a0 (g, k=t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
        split_tf32(v0.x, ah[0], al[0]);
        split_tf32(v1.x, ah[1], al[1]);
        split_tf32(v0.y, ah[2], al[2]);
        split_tf32(v1.y, ah[3], al[3]);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          mma_k8_tf32(acc[i][j], al, bh[j][0], bh[j][1]);  // small terms first
          mma_k8_tf32(acc[i][j], ah, bl[j][0], bl[j][1]);
          mma_k8_tf32(acc[i][j], ah, bh[j][0], bh[j][1]);
        }
      }
    }
  }

  // Epilogue: accumulator c of (i, j) is (row g + 8 (c / 2), column 2t + c % 2) of the 16x8 tile.
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    const int col = n0 + wn * NT * 8 + j * 8 + 2 * t;
    if (col >= p.n) continue;  // N even: col + 1 < N too
    const float2 b = bias_pair(p, col);
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = m0 + wm * MT * 16 + i * 16 + g + 8 * h;
        if (row < p.m) store_pair<RES>(p, row, col, acc[i][j][2 * h], acc[i][j][2 * h + 1], b);
      }
    }
  }
}

template <int BM, int BN, bool WT>
constexpr int smem_bytes() {
  return (BM * kBK + w_stage_floats<BN, WT>()) * kStages * int(sizeof(float));
}

}  // namespace tessera::cuda::linear
