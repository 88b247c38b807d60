#pragma once
// Device code of the WSB tensor-core SpMM (launchers in spmm_wsb.cu).
//
// Work split: one warp per (16-row window, 64-feature slab); 4 warps per CTA take 4 consecutive
// windows of the same slab (neighbouring windows share many sources, so their gathers meet in
// L2). Per block pair the warp
//   1. gathers the 16 source rows x 64 features of X into shared memory (cp.async 16-byte
//      chunks when rows are 16-byte aligned, else element loads), double buffered so the gather
//      of pair p+1 flies while pair p multiplies;
//   2. loads the 16x16 weight operand straight from the two row-major tiles (each 32-bit load
//      is warp-contiguous: 128 bytes per instruction);
//   3. fp16/bf16: ldmatrix.x4.trans turns the row-major [k][n] feature tile into B fragments,
//      then mma.m16n8k16 (fp32 accumulate) per 8-feature n-tile;
//      tf32: B fragments read from shared memory, cvt.rna.tf32, mma.m16n8k8 per block.
// The accumulators (8 n-tiles x 4 floats) are written once at the end, so an empty window
// writes zeros. Rows past `rows` and features past F are masked; empty column slots (-1) and
// features past F gather zeros.
//
// Shared-memory rows are padded by 8 elements (16 bytes for 16-bit types, 32 for fp32): the 8
// row addresses of an ldmatrix phase then fall in distinct bank groups, and the tf32 B reads
// (rows t, columns g) hit 32 distinct banks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/ops/mma_fragments.hpp"
#include "cuda/ops/tf32_mma.cuh"

namespace tessera::cuda::wsb {

constexpr int kWarps = 4;             // warps (windows) per CTA
constexpr int kSlab = 64;             // features per warp = 8 n-tiles of 8
constexpr int kNTiles = kSlab / 8;
constexpr int kPad = 8;               // elements of padding per shared row
constexpr int kRow = kSlab + kPad;    // shared row stride in elements

template <class I, class T, class Out>
struct Params {
  int64_t rows = 0, windows = 0, F = 0;
  const int64_t* window_ptr = nullptr;
  const I* block_cols = nullptr;
  const T* tiles = nullptr;           // tile type: __half / __nv_bfloat16 / float
  const T* X = nullptr;               // features in the operand type (fp32 for tf32)
  int64_t ldx = 0;
  Out* Y = nullptr;
  int64_t ldy = 0;
};

// ---- small PTX wrappers -------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// 16-byte async copy; src_bytes = 0 writes 16 zero bytes (src is not read).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_one() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_addr))
               : "memory");  // orders it after the gather's plain shared stores (fallback path)
}

template <class T>
__device__ __forceinline__ void mma_k16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }

template <class T> __device__ __forceinline__ T zero_of() { return from_float<T>(0.0f); }

// ---- gather: 16 source rows x kSlab features of X into sX -----------------------------------
// Column id of slot `slot` (0..15) of the current pair: lanes 0..15 hold them; -1 = empty slot.
__device__ __forceinline__ int64_t slot_col(int64_t my_col, int slot) {
  return __shfl_sync(0xffffffffu, my_col, slot);
}

// Vector path: rows 16-byte aligned (F, ldx multiples of 16 bytes / element and X aligned).
template <class T>
__device__ __forceinline__ void gather_async(T (*sX)[kRow], const T* X, int64_t ldx, int64_t F, int64_t f0,
                                             int64_t my_col, int lane) {
  constexpr int kChunk = 16 / sizeof(T);        // elements per 16-byte chunk
  constexpr int kPerRow = kSlab / kChunk;       // chunks per slab row (8 or 16)
  constexpr int kRowsPerStep = 32 / kPerRow;    // rows covered by one warp step (4 or 2)
#pragma unroll
  for (int step = 0; step < 16 / kRowsPerStep; ++step) {
    const int row = step * kRowsPerStep + lane / kPerRow;
    const int chunk = lane % kPerRow;
    const int64_t src = slot_col(my_col, row);
    const int64_t f = f0 + int64_t(chunk) * kChunk;
    const bool valid = src >= 0 && f < F;       // F % kChunk == 0: a chunk is all in or all out
    const T* from = valid ? X + src * ldx + f : X;
    cp_async16(&sX[row][chunk * kChunk], from, valid ? 16 : 0);
  }
}

// Fallback: any F, ldx, alignment; element loads, coalesced along the feature axis.
template <class T>
__device__ __forceinline__ void gather_sync(T (*sX)[kRow], const T* X, int64_t ldx, int64_t F, int64_t f0,
                                            int64_t my_col, int lane) {
#pragma unroll 4
  for (int row = 0; row < 16; ++row) {
    const int64_t src = slot_col(my_col, row);
#pragma unroll
    for (int j = lane; j < kSlab; j += 32) {
      const int64_t f = f0 + j;
      sX[row][j] = (src >= 0 && f < F) ? X[src * ldx + f] : zero_of<T>();
    }
  }
}

// ---- epilogue -------------------------------------------------------------------------------------
template <class Out>
__device__ __forceinline__ void store_acc(const float (&acc)[kNTiles][4], Out* Y, int64_t ldy, int64_t rows,
                                          int64_t F, int64_t row0, int64_t f0, int lane, bool pair_ok) {
#pragma unroll
  for (int j = 0; j < kNTiles; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // h = 0: c0,c1 (row g); h = 1: c2,c3 (row g + 8)
      const mma::RowCol rc = mma::acc_c(lane, 2 * h);
      const int64_t y = row0 + rc.row;
      const int64_t f = f0 + 8 * j + rc.col;
      if (y >= rows || f >= F) continue;
      Out* dst = Y + y * ldy + f;
      if (pair_ok && f + 1 < F) {
        if constexpr (std::is_same_v<Out, float>) {
          *reinterpret_cast<float2*>(dst) = make_float2(acc[j][2 * h], acc[j][2 * h + 1]);
        } else {
          Out two[2] = {from_float<Out>(acc[j][2 * h]), from_float<Out>(acc[j][2 * h + 1])};
          *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(two);
        }
      } else {
        dst[0] = from_float<Out>(acc[j][2 * h]);
        if (f + 1 < F) dst[1] = from_float<Out>(acc[j][2 * h + 1]);
      }
    }
  }
}

// ---- per-call weights: tiles from an nnz-array -------------------------------------------------------
// One thread per occupied cell (a run of CSR entries sorted by cell): sums the run's weights in
// fp32 and writes the cell once, rounded to the tile type. No atomics, deterministic. The
// caller zeroes the tiles first (unoccupied cells stay zero).
template <class T>
__global__ void wsb_refill_kernel(const int64_t* __restrict__ run_cell, const int64_t* __restrict__ run_ptr,
                                  const int64_t* __restrict__ run_entry, int64_t runs,
                                  const float* __restrict__ values, T* __restrict__ tiles) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < runs; r += int64_t(gridDim.x) * blockDim.x) {
    float s = 0.0f;
    for (int64_t j = run_ptr[r]; j < run_ptr[r + 1]; ++j) s += values[run_entry[j]];
    tiles[run_cell[r]] = from_float<T>(s);
  }
}

// ---- fp16 / bf16: mma.m16n8k16 --------------------------------------------------------------------
template <class I, class T, bool kAsync>
__global__ void __launch_bounds__(kWarps * 32) spmm_wsb_k16_kernel(Params<I, T, T> p, bool pair_ok) {
  __shared__ __align__(16) T smem[kWarps][2][16][kRow];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t window = int64_t(blockIdx.x) * kWarps + warp;
  if (window >= p.windows) return;  // warp-uniform; no CTA-wide barrier below
  const int64_t f0 = int64_t(blockIdx.y) * kSlab;
  const int64_t b_begin = p.window_ptr[window];
  const int64_t pairs = (p.window_ptr[window + 1] - b_begin) >> 1;
  // n-tile pairs that hold at least one feature < F (warp-uniform).
  const int64_t live = (p.F - f0 + 15) / 16;
  const int npairs_n = live < kNTiles / 2 ? int(live) : kNTiles / 2;

  float acc[kNTiles][4];
#pragma unroll
  for (int j = 0; j < kNTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

  auto col_of_pair = [&](int64_t pr) -> int64_t {
    return lane < 16 ? int64_t(p.block_cols[(b_begin + 2 * pr) * 8 + lane]) : int64_t(-1);
  };
  auto gather = [&](int buf, int64_t pr) {
    const int64_t c = col_of_pair(pr);
    if constexpr (kAsync) gather_async<T>(smem[warp][buf], p.X, p.ldx, p.F, f0, c, lane);
    else gather_sync<T>(smem[warp][buf], p.X, p.ldx, p.F, f0, c, lane);
  };

  if (pairs > 0) gather(0, 0);
  if constexpr (kAsync) cp_async_commit();
  for (int64_t pr = 0; pr < pairs; ++pr) {
    const int buf = int(pr & 1);
    if (pr + 1 < pairs) gather(buf ^ 1, pr + 1);
    if constexpr (kAsync) cp_async_commit();  // possibly empty group: keeps wait_group 1 exact

    // Weight operand of the pair (global, read-only path) while the gather lands.
    const T* tile = p.tiles + (b_begin + 2 * pr) * 128;
    uint32_t a[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const mma::TileCell c = mma::wsb_a_k16(lane, r);
      a[r] = __ldg(reinterpret_cast<const unsigned int*>(tile + c.block * 128 + c.row * 8 + c.slot));
    }
    if constexpr (kAsync) cp_async_wait_one();
    __syncwarp();

    const mma::RowCol ad = mma::wsb_ldsm_addr(lane);
#pragma unroll
    for (int q = 0; q < kNTiles / 2; ++q) {
      if (q >= npairs_n) break;
      uint32_t b[4];
      ldsm_x4_trans(b, &smem[warp][buf][ad.row][16 * q + ad.col]);
      mma_k16<T>(acc[2 * q], a, b[0], b[1]);
      mma_k16<T>(acc[2 * q + 1], a, b[2], b[3]);
    }
    __syncwarp();  // every lane is done reading `buf` before the next iteration refills it
  }
  store_acc<T>(acc, p.Y, p.ldy, p.rows, p.F, window * 16, f0, lane, pair_ok);
}

// ---- fp32 input: tf32 mma.m16n8k8 -----------------------------------------------------------------
template <class I, bool kAsync>
__global__ void __launch_bounds__(kWarps * 32) spmm_wsb_tf32_kernel(Params<I, float, float> p, bool pair_ok) {
  __shared__ __align__(16) float smem[kWarps][2][16][kRow];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t window = int64_t(blockIdx.x) * kWarps + warp;
  if (window >= p.windows) return;
  const int64_t f0 = int64_t(blockIdx.y) * kSlab;
  const int64_t b_begin = p.window_ptr[window];
  const int64_t pairs = (p.window_ptr[window + 1] - b_begin) >> 1;
  const int64_t live = (p.F - f0 + 7) / 8;
  const int ntiles = live < kNTiles ? int(live) : kNTiles;

  float acc[kNTiles][4];
#pragma unroll
  for (int j = 0; j < kNTiles; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;

  auto gather = [&](int buf, int64_t pr) {
    const int64_t c = lane < 16 ? int64_t(p.block_cols[(b_begin + 2 * pr) * 8 + lane]) : int64_t(-1);
    if constexpr (kAsync) gather_async<float>(smem[warp][buf], p.X, p.ldx, p.F, f0, c, lane);
    else gather_sync<float>(smem[warp][buf], p.X, p.ldx, p.F, f0, c, lane);
  };

  if (pairs > 0) gather(0, 0);
  if constexpr (kAsync) cp_async_commit();
  for (int64_t pr = 0; pr < pairs; ++pr) {
    const int buf = int(pr & 1);
    if (pr + 1 < pairs) gather(buf ^ 1, pr + 1);
    if constexpr (kAsync) cp_async_commit();

    uint32_t a[2][4];
#pragma unroll
    for (int blk = 0; blk < 2; ++blk) {
      const float* tile = p.tiles + (b_begin + 2 * pr + blk) * 128;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const mma::RowCol rc = mma::k8_tf32_a(lane, i);
        a[blk][i] = to_tf32(__ldg(tile + rc.row * 8 + rc.col));
      }
    }
    if constexpr (kAsync) cp_async_wait_one();
    __syncwarp();

    const mma::RowCol b0 = mma::k8_tf32_b(lane, 0), b1 = mma::k8_tf32_b(lane, 1);
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
      if (j >= ntiles) break;
#pragma unroll
      for (int blk = 0; blk < 2; ++blk) {
        const uint32_t x0 = to_tf32(smem[warp][buf][8 * blk + b0.row][8 * j + b0.col]);
        const uint32_t x1 = to_tf32(smem[warp][buf][8 * blk + b1.row][8 * j + b1.col]);
        mma_k8_tf32(acc[j], a[blk], x0, x1);
      }
    }
    __syncwarp();
  }
  store_acc<float>(acc, p.Y, p.ldy, p.rows, p.F, window * 16, f0, lane, pair_ok);
}

}  // namespace tessera::cuda::wsb
