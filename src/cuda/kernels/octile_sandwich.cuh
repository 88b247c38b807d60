// The product-graph mat-vec of a pair as two block-sparse matrix products ("sandwich"):
// with the vector reshaped X (n x n'), G split into planes A_l of one edge label each and
// Bt_l = B o k_e(l, .), the mat-vec is Y = sum_l A_l X Bt_l^T. Stage 1 forms Z_l = X Bt_l^T once
// per label; stage 2 sums A_l Z_l. Each stage costs 64 multiply-adds per (row, non-empty tile,
// plane), against nnz x nnz' for the direct product: on dense octiles a small fraction of the
// work, and all of it dense 8x8 products from registers.
//
// One stage: out(row, T*8 + s) = sum over tiles (T, U) of W, planes p of the tile:
//   sum_c in_p(row, U*8 + c) * W_p[s][c],
// with in_p and out in the product vectors' 8x8 block layout and out stored transposed (the output
// of stage 1 is Z_l^T, which stage 2 reads row-wise; the output of stage 2 is Y). A lane owns R
// rows and accumulates their 8 x R outputs over the tile row in registers; the W tile is the same
// for all lanes (uniform loads, stored transposed so that one load is a column). Work items (T, slab of 32 R rows) go to consecutive warps in T
// order, so the warps of a block read overlapping column windows of `in` (banded graphs: mostly
// L1 hits).
//
// fp32 runs the stage on the tensor cores (sandwich_stage_tf32x3): the same work items, each 8x8
// product an mma.m16n8k8 per 16 rows in three tf32 terms, fp32-level accuracy. The FFMA version is
// kept for fp64 and as the TESSERA_MGK_TF32=0 path. Same run on the H200, mat-vec kernels of a
// 6144-node band-12 pair, 1 / 2 edge labels: FFMA 26 / 29% of the fp32 (CUDA-core) peak, tf32x3
// 34 / 38% (bench/results/h200_20261202).
#pragma once
#include <cstdint>

#include "cuda/ops/mma_fragments.hpp"
#include "cuda/ops/tf32_mma.cuh"

namespace tessera::kernels::detail {

template <class T, class W>
struct StageArgs {
  const int32_t* row_ptr;    // rows + 1 absolute tile indices of W
  const int32_t* tile_col;   // column block U of each tile
  const int32_t* plane_ptr;  // planes of tile t: [plane_ptr[t], plane_ptr[t+1]); nullptr: one plane per tile
  const W* w;                // plane weights transposed, 64 each: W_p[s][c] at w[(p - plane0) * 64 + c * 8 + s]
  int32_t tile0, plane0;     // first tile of W; first plane (plane_ptr != nullptr)
  const int32_t* plane_in;   // input matrix of plane p: in + plane_in[p - plane0] * in_stride (nullptr: in)
  const T* in;
  int64_t in_stride;
  T* out;
  int64_t out_stride;        // group g (plane_ptr == nullptr) writes out + g * out_stride
  int64_t group_tiles;       // plane_ptr == nullptr: group g's weights of tile t at plane g * group_tiles + t - tile0
  int rows;                  // tile rows T of W
  int in_bpr;                // column blocks of an input matrix
  int in_rblocks;            // row blocks of an input matrix (= column blocks of out)
  int groups;                // plane_ptr == nullptr: independent products, one per weight group (label)
};

// The weight planes [x, y) of tile t (absolute tile index) in group g: the tile's planes (stage 2,
// `planes`) or its one weight tile of group g (stage 1), as indices into the stage's weights.
template <class T, class W>
__device__ __forceinline__ int2 stage_planes(const StageArgs<T, W>& a, int t, int g, bool planes) {
  if (planes) return make_int2(a.plane_ptr[t] - a.plane0, a.plane_ptr[t + 1] - a.plane0);
  const int p = int(g * a.group_tiles + (t - a.tile0));
  return make_int2(p, p + 1);
}

// Eight consecutive values (two 16-byte loads for float: p is 32-byte aligned); also used by the
// direct mat-vec (marginalized_kernel.cu).
template <class V>
__device__ __forceinline__ void load8v(const V* p, V (&v)[8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = p[i];
}
template <>
__device__ __forceinline__ void load8v<float>(const float* p, float (&v)[8]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

// Work items first, first + stride, ... of one stage (warp-granular; every lane of the warp calls).
template <class T, class W, int R>
__device__ void sandwich_stage(const StageArgs<T, W>& a, int64_t first, int64_t stride) {
  const int lane = threadIdx.x & 31;
  const int nrows = a.in_rblocks * 8;
  const int slabs = (nrows + 32 * R - 1) / (32 * R);
  const int64_t items = int64_t(a.groups) * slabs * a.rows;
  for (int64_t it = first; it < items; it += stride) {
    const int trow = int(it % a.rows);
    const int64_t gs = it / a.rows;
    const int slab = int(gs % slabs), g = int(gs / slabs);
    // Lane rows row0 + 32 k, k < nk: 32 rows are 4 row blocks apart.
    const int row0 = slab * 32 * R + lane;
    const int nk = row0 < nrows ? min(R, (nrows - row0 + 31) / 32) : 0;
    const int64_t rbase = int64_t(row0 >> 3) * a.in_bpr * 64 + (row0 & 7) * 8, rstep = int64_t(4) * a.in_bpr * 64;
    T acc[R][8];
#pragma unroll
    for (int k = 0; k < R; ++k)
#pragma unroll
      for (int s = 0; s < 8; ++s) acc[k][s] = 0;
    const int t0 = a.row_ptr[trow], t1 = a.row_ptr[trow + 1];
    for (int t = t0; t < t1; ++t) {
      const int64_t ucol = int64_t(a.tile_col[t]) * 64;
      const int2 pr = stage_planes(a, t, g, a.plane_ptr != nullptr);
      for (int p = pr.x; p < pr.y; ++p) {
        const T* in = a.in + (a.plane_in ? int64_t(a.plane_in[p]) * a.in_stride : 0) + ucol;
        const W* w = a.w + int64_t(p) * 64;
        T x[R][8];
#pragma unroll
        for (int k = 0; k < R; ++k) {
          if (k < nk) {
            load8v(in + rbase + k * rstep, x[k]);
          } else {
#pragma unroll
            for (int c = 0; c < 8; ++c) x[k][c] = 0;
          }
        }
        // Column c of W_p (one 32-byte uniform load) meets column c of the rows: 8 R independent
        // multiply-adds per step.
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          W wc[8];
          load8v(w + c * 8, wc);
#pragma unroll
          for (int k = 0; k < R; ++k)
#pragma unroll
            for (int s = 0; s < 8; ++s) acc[k][s] += x[k][c] * T(wc[s]);
        }
      }
    }
    T* out = a.out + (a.plane_ptr ? 0 : g * a.out_stride) + int64_t(trow) * a.in_rblocks * 64;
#pragma unroll
    for (int k = 0; k < R; ++k) {
      if (k >= nk) continue;
      const int row = row0 + 32 * k;
      T* o = out + int64_t(row >> 3) * 64 + (row & 7);
#pragma unroll
      for (int s = 0; s < 8; ++s) o[s * 8] = acc[k][s];
    }
  }
}

// split_tf32 and mma_k8_tf32: cuda/ops/tf32_mma.cuh (hi/lo split, error bound there).
using tessera::cuda::split_tf32;

// The fp32 stage on the tensor cores. A warp takes the work items of sandwich_stage<float, W, 4>
// (one tile row T of W, a slab of 128 rows = 8 m16 tiles of two row blocks); per (tile, plane) a
// lane loads its 16 x elements with 8-byte loads (each load of the warp reads one whole 256-byte
// block), and each m16 tile does x W^T as x_lo w_hi + x_hi w_lo + x_hi w_hi (split_tf32), three
// mma.m16n8k8 into fp32 accumulators; the x_lo w_lo term (<= 2^-22 relative) is dropped. A
// product's relative error is then below 2^-19.6 (typically ~2^-22), unbiased, against 2^-24 for an
// fp32 multiply-add. kPlanes: stage 2 (planes of G's tiles, each reading its label's Z_l) rather
// than stage 1 (weight groups, one per label, over one input). Fragment layouts and offsets:
// mma_fragments.hpp (sandwich_*), emulated on the CPU by the MmaFragments tests. Work items are
// decoded in 32 bits (the host checks that they fit).
constexpr int kSandwichTiles = 8;  // m16 tiles per warp: 113-121 registers (4 tiles: 64, 6-13% slower on the H200)
template <bool kPlanes>
__device__ void sandwich_stage_tf32x3(const StageArgs<float, float>& a, int64_t first, int64_t stride) {
  namespace mma = tessera::cuda::mma;
  constexpr int kTiles = kSandwichTiles, kBlocks = 2 * kTiles;  // m16 tiles and row blocks per slab
  const int lane = threadIdx.x & 31;
  const uint32_t rows = uint32_t(a.rows), slabs = uint32_t((a.in_rblocks + kBlocks - 1) / kBlocks);
  const int64_t items = int64_t(a.groups) * slabs * rows;
  const int64_t bstep = int64_t(a.in_bpr) * 64;  // one row block down the input
  const int xo = mma::sandwich_x_offset(lane);
  const int wo0 = mma::sandwich_w_offset(lane, 0), wo1 = mma::sandwich_w_offset(lane, 1);
  for (int64_t it = first; it < items; it += stride) {
    const uint32_t trow = uint32_t(it) % rows, gs = uint32_t(it) / rows;
    const int slab = int(gs % slabs), g = int(gs / slabs);
    const int rb0 = slab * kBlocks, nb = min(kBlocks, a.in_rblocks - rb0);  // row blocks in the slab
    float acc[kTiles][4];
#pragma unroll
    for (int j = 0; j < kTiles; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][i] = 0.f;
    const int t0 = a.row_ptr[trow], t1 = a.row_ptr[trow + 1];
    const float* in0 = a.in + int64_t(rb0) * bstep + xo;
    for (int t = t0; t < t1; ++t) {
      const float* in_t = in0 + int64_t(a.tile_col[t]) * 64;
      const int2 pr = stage_planes(a, t, g, kPlanes);
      for (int p = pr.x; p < pr.y; ++p) {
        const float* in = kPlanes ? in_t + int64_t(a.plane_in[p]) * a.in_stride : in_t;
        const float* w = a.w + int64_t(p) * 64;
        uint32_t bh[2], bl[2];
        split_tf32(w[wo0], bh[0], bl[0]);
        split_tf32(w[wo1], bh[1], bl[1]);
        // Whole slabs load unpredicated, stepping one pointer (the last slab of an input whose
        // row blocks are not a multiple of kBlocks zero-fills the rest).
        float2 xv[kBlocks];
        if (nb == kBlocks) {
#pragma unroll
          for (int b = 0; b < kBlocks; ++b, in += bstep) xv[b] = *reinterpret_cast<const float2*>(in);
        } else {
#pragma unroll
          for (int b = 0; b < kBlocks; ++b, in += bstep)
            xv[b] = b < nb ? *reinterpret_cast<const float2*>(in) : make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int j = 0; j < kTiles; ++j) {
          // A elements 0..3: (row g, col 2t), (g + 8, 2t), (g, 2t + 1), (g + 8, 2t + 1).
          const float av[4] = {xv[2 * j].x, xv[2 * j + 1].x, xv[2 * j].y, xv[2 * j + 1].y};
          uint32_t ah[4], al[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) split_tf32(av[i], ah[i], al[i]);
          tessera::cuda::mma_k8_tf32(acc[j], al, bh[0], bh[1]);
          tessera::cuda::mma_k8_tf32(acc[j], ah, bl[0], bl[1]);
          tessera::cuda::mma_k8_tf32(acc[j], ah, bh[0], bh[1]);
        }
      }
    }
    float* out = a.out + (kPlanes ? 0 : g * a.out_stride) + (int64_t(trow) * a.in_rblocks + rb0) * 64;
#pragma unroll
    for (int j = 0; j < kTiles; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int b = 2 * j + (i >> 1);
        if (b < nb) out[b * 64 + mma::sandwich_out_offset(lane, i)] = acc[j][i];
      }
  }
}

// Rows per lane: 4 in fp32 (32 accumulators), 2 in fp64 (the same registers). (fp32 at 2 rows,
// 80 registers and 3 blocks per SM ran 11-15% slower on the H200.)
template <class T>
constexpr int sandwich_rows() {
  return sizeof(T) == 4 ? 4 : 2;
}

}  // namespace tessera::kernels::detail
