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
#pragma once
#include <cstdint>

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
      int p0, p1;
      if (a.plane_ptr) {
        p0 = a.plane_ptr[t] - a.plane0;
        p1 = a.plane_ptr[t + 1] - a.plane0;
      } else {
        p0 = int(g * a.group_tiles + (t - a.tile0));
        p1 = p0 + 1;
      }
      for (int p = p0; p < p1; ++p) {
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

// Rows per lane: 4 in fp32 (32 accumulators), 2 in fp64 (the same registers). (fp32 at 2 rows,
// 80 registers and 3 blocks per SM ran 11-15% slower on the H200.)
template <class T>
constexpr int sandwich_rows() {
  return sizeof(T) == 4 ? 4 : 2;
}

}  // namespace tessera::kernels::detail
