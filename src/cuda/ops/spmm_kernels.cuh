#pragma once
// Device code of the custom CSR SpMM / SDDMM kernels (launchers in spmm.cu).
//
// One kernel template covers both custom variants: a group of G lanes (G divides 32) owns one
// row; each lane holds NV vectors of V consecutive features in registers (accumulated in W =
// float, double for float64), so a feature tile is G*V*NV wide. The group loads G (col, weight)
// pairs at once and broadcasts them with shuffles, then every lane gathers its slice of each
// source row X[col] - one coalesced 16-byte load per lane when V*sizeof(T) == 16.
//   warp_row:          G in {8, 16, 32} (a warp, or a sub-warp for narrow rows), V = 16 bytes.
//   feature_parallel:  F <= 32, G = next power of two >= F, V = 1: threads over (row, feature),
//                      32 / G rows per warp.
// All row and feature offsets are 64-bit (rows * ld can pass 2^31).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tessera::ops::cuda::kernels {

template <class T> using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T> __device__ __forceinline__ Acc<T> to_acc(T v) { return Acc<T>(v); }
template <> __device__ __forceinline__ float to_acc<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_acc<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T from_acc(Acc<T> v) { return T(v); }
template <> __device__ __forceinline__ __half from_acc<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Elements per 16-byte vector.
template <class T> constexpr int kVec16 = int(16 / sizeof(T));

// Loads / stores V consecutive elements (p aligned to V * sizeof(T) when V > 1).
template <class T, int V>
__device__ __forceinline__ void load_vec(const T* __restrict__ p, Acc<T> (&out)[V]) {
  if constexpr (V == 1) {
    out[0] = to_acc(p[0]);
  } else if constexpr (std::is_same_v<T, float> && V == 4) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(p));
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else if constexpr (std::is_same_v<T, double> && V == 2) {
    const double2 v = __ldg(reinterpret_cast<const double2*>(p));
    out[0] = v.x, out[1] = v.y;
  } else {  // 8 x 16-bit in one uint4
    static_assert(sizeof(T) == 2 && V == 8, "unsupported vector");
    const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
    const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i) out[i] = to_acc(h[i]);
  }
}

template <class T, int V>
__device__ __forceinline__ void store_vec(T* __restrict__ p, const Acc<T> (&in)[V]) {
  if constexpr (V == 1) {
    p[0] = from_acc<T>(in[0]);
  } else if constexpr (std::is_same_v<T, float> && V == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(in[0], in[1], in[2], in[3]);
  } else if constexpr (std::is_same_v<T, double> && V == 2) {
    *reinterpret_cast<double2*>(p) = make_double2(in[0], in[1]);
  } else {
    uint4 u;
    T* h = reinterpret_cast<T*>(&u);
#pragma unroll
    for (int i = 0; i < 8; ++i) h[i] = from_acc<T>(in[i]);
    *reinterpret_cast<uint4*>(p) = u;
  }
}

// Shuffle mask of the G-lane group this lane belongs to.
template <int G>
__device__ __forceinline__ unsigned group_mask() {
  if constexpr (G == 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << G) - 1u) << (lane / G * G);
  }
}

// Arguments of csr_rows_kernel. Rows longer than long_row edges are skipped by the row pass and
// handled by the chunk pass: `chunks` holds (long-row index, edge begin, edge end) triples of at
// most a few hundred edges, each reduced by one group and atomically added into `partial`
// (long rows x F, accumulation type), then written to Y by finalize_long_rows_kernel. This bounds
// the critical path of power-law graphs (one R-MAT row can hold 10^5 edges) at the price of
// non-deterministic summation order for those rows only.
template <class T, class I>
struct RowsParams {
  int64_t rows, F;
  const I* __restrict__ rowptr;
  const I* __restrict__ col;
  const Acc<T>* __restrict__ wv;
  const float* __restrict__ wa;
  const T* __restrict__ X;
  int64_t ldx;
  T* __restrict__ Y;
  int64_t ldy;
  int64_t long_row;           // rows with more edges are left to the chunk pass
  const int64_t* __restrict__ chunks;
  int64_t n_chunks;
  Acc<T>* __restrict__ partial;
  const Acc<T>* __restrict__ bias = nullptr;  // F values added to every row at its one write of Y
};

// The accumulator's starting value: bias[f .. f + V) (the fused `+ b` of a layer), or 0. Loaded
// before the edge loop, so the loads overlap the row's gathers: added after the loop they made the
// latency-bound 5-edge rows of a grid graph 1.00 ms instead of 0.88 ms (width 256, H200).
template <class T, int V>
__device__ __forceinline__ void init_acc(const Acc<T>* __restrict__ bias, int64_t f, bool in_range, Acc<T> (&acc)[V]) {
#pragma unroll
  for (int t = 0; t < V; ++t) acc[t] = bias && in_range ? __ldg(bias + f + t) : Acc<T>(0);
}

// Source rows gathered concurrently per lane (see accumulate_edges). The row pass on short-row
// graphs is bound by resident warps (registers), not by memory rounds per row: a larger predicated
// batch (h200_20261202b) and a group walking runs of consecutive rows as one gather stream
// (h200_20261202e: 80 registers, grid 2^20 width 256 0.91 -> 1.14 ms) both lost.
constexpr int kIlp = 4;

// acc += sum of w_e * X[col_e, f0 + lane's slice] over the edges e0, e0 + stride, ... < end taken
// G at a time by this group (stride = G for a whole row; groups of a block interleave).
// Batches of kIlp edges: all kIlp source-row loads are issued before the first FMA needs one, so
// each lane keeps kIlp gathers in flight instead of one. Without this a row of d edges costs d
// dependent memory latencies, which made rows of a few hundred edges the critical path of small
// and power-law graphs. Accumulation order stays edge order within the group.
template <class T, class I, int V, int NV, int G>
__device__ __forceinline__ void accumulate_edges(const RowsParams<T, I>& p, int64_t e_first, int64_t end,
                                                 int64_t stride, int64_t f0, int lane, unsigned mask,
                                                 Acc<T> (&acc)[NV][V]) {
  using W = Acc<T>;
  const int64_t F = p.F;
  for (int64_t e0 = e_first; e0 < end; e0 += stride) {
    const int64_t e = e0 + lane;
    I c = 0;
    W w = W(0);
    if (e < end) {
      c = p.col[e];
      w = p.wv ? p.wv[e] : p.wa ? W(p.wa[e]) : W(1);
    }
    const int n = int(min(int64_t(G), end - e0));
    int j = 0;
    for (; j + kIlp <= n; j += kIlp) {
      I cj[kIlp];
      W wj[kIlp];
#pragma unroll
      for (int u = 0; u < kIlp; ++u) {
        cj[u] = __shfl_sync(mask, c, j + u, G);
        wj[u] = __shfl_sync(mask, w, j + u, G);
      }
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        const int64_t f = (int64_t(v) * G + lane) * V;
        if (f0 + f < F) {
          W x[kIlp][V];
#pragma unroll
          for (int u = 0; u < kIlp; ++u) load_vec<T, V>(p.X + int64_t(cj[u]) * p.ldx + f0 + f, x[u]);
#pragma unroll
          for (int u = 0; u < kIlp; ++u)
#pragma unroll
            for (int t = 0; t < V; ++t) acc[v][t] += wj[u] * x[u][t];
        }
      }
    }
    for (; j < n; ++j) {
      const I cj = __shfl_sync(mask, c, j, G);
      const W wj = __shfl_sync(mask, w, j, G);
      const T* __restrict__ xr = p.X + int64_t(cj) * p.ldx + f0;
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        const int64_t f = (int64_t(v) * G + lane) * V;
        if (f0 + f < F) {
          W x[V];
          load_vec<T, V>(xr + f, x);
#pragma unroll
          for (int t = 0; t < V; ++t) acc[v][t] += wj * x[t];
        }
      }
    }
  }
}

// Item `gid` of the row pass (row gid, skipped when longer than long_row) or of the chunk pass
// (chunk gid of a long row), reduced by one group of G lanes.
template <class T, class I, int V, int NV, int G, bool kChunks>
__device__ __forceinline__ void rows_item(const RowsParams<T, I>& p, int64_t gid) {
  using W = Acc<T>;
  int64_t beg, end, out;
  if constexpr (kChunks) {
    if (gid >= p.n_chunks) return;  // the whole group leaves together: G divides the block
    out = p.chunks[3 * gid], beg = p.chunks[3 * gid + 1], end = p.chunks[3 * gid + 2];
  } else {
    if (gid >= p.rows) return;
    beg = int64_t(p.rowptr[gid]), end = int64_t(p.rowptr[gid + 1]), out = gid;
    if (end - beg > p.long_row) return;
  }
  const int lane = int(threadIdx.x % G);
  const unsigned mask = group_mask<G>();
  const int64_t F = p.F;
  constexpr int64_t kTile = int64_t(G) * V * NV;
  // Chunks are partial sums of a row: its bias is added once, by finalize_long_rows_kernel.
  const Acc<T>* __restrict__ bias = kChunks ? nullptr : p.bias;
  for (int64_t f0 = 0; f0 < F; f0 += kTile) {
    W acc[NV][V];
#pragma unroll
    for (int v = 0; v < NV; ++v) {
      const int64_t f = f0 + (int64_t(v) * G + lane) * V;
      init_acc<T, V>(bias, f, f < F, acc[v]);
    }
    accumulate_edges<T, I, V, NV, G>(p, beg, end, G, f0, lane, mask, acc);
#pragma unroll
    for (int v = 0; v < NV; ++v) {
      const int64_t f = (int64_t(v) * G + lane) * V;
      if (f0 + f < F) {
        if constexpr (kChunks) {
          W* dst = p.partial + out * F + f0 + f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
          // One 16-byte vector atomic instead of four scalar ones (sm_90+, global memory); the
          // partial rows are 16-byte aligned when F is a multiple of 4.
          if constexpr (std::is_same_v<W, float> && V % 4 == 0) {
            if (F % 4 == 0) {
#pragma unroll
              for (int t = 0; t < V; t += 4)
                atomicAdd(reinterpret_cast<float4*>(dst + t),
                          make_float4(acc[v][t], acc[v][t + 1], acc[v][t + 2], acc[v][t + 3]));
              continue;
            }
          }
#endif
#pragma unroll
          for (int t = 0; t < V; ++t) atomicAdd(dst + t, acc[v][t]);
        } else {
          store_vec<T, V>(p.Y + out * p.ldy + f0 + f, acc[v]);
        }
      }
    }
  }
}

template <class T, class I, int V, int NV, int G, bool kChunks>
__global__ void __launch_bounds__(256) csr_rows_kernel(RowsParams<T, I> p) {
  rows_item<T, I, V, NV, G, kChunks>(p, (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G);
}

// A row of medium length (a few hundred to a few thousand edges) by a whole 256-thread block.
// Its 256 / G groups take interleaved batches of G edges, then the block sums the groups' partial
// tiles in shared memory and writes Y directly: no atomics, no zeroed buffer, no finalize pass,
// and a fixed summation order (deterministic).
template <class T, class I, int V, int NV, int G>
__device__ __forceinline__ void block_row(const RowsParams<T, I>& p, int64_t row) {
  using W = Acc<T>;
  constexpr int kGroups = 256 / G;
  constexpr int kTile = G * V * NV;
  __shared__ W red[kGroups * kTile];
  const int grp = int(threadIdx.x) / G, lane = int(threadIdx.x) % G;
  const unsigned mask = group_mask<G>();
  const int64_t beg = int64_t(p.rowptr[row]), end = int64_t(p.rowptr[row + 1]);
  for (int64_t f0 = 0; f0 < p.F; f0 += kTile) {
    W acc[NV][V];
#pragma unroll
    for (int v = 0; v < NV; ++v)
#pragma unroll
      for (int j = 0; j < V; ++j) acc[v][j] = W(0);
    accumulate_edges<T, I, V, NV, G>(p, beg + int64_t(grp) * G, end, int64_t(kGroups) * G, f0, lane, mask, acc);
#pragma unroll
    for (int v = 0; v < NV; ++v)
#pragma unroll
      for (int t = 0; t < V; ++t) red[grp * kTile + (v * G + lane) * V + t] = acc[v][t];
    __syncthreads();
    for (int i = int(threadIdx.x); i < kTile; i += 256) {
      W s = W(0);
#pragma unroll 4
      for (int g = 0; g < kGroups; ++g) s += red[g * kTile + i];
      if (f0 + i < p.F) p.Y[row * p.ldy + f0 + i] = from_acc<T>(p.bias ? s + p.bias[f0 + i] : s);
    }
    __syncthreads();
  }
}

// The medium rows and the row pass in one launch: blocks [0, n_block) take one medium row each
// (dispatched first, so they start first), the blocks after them are the row pass. On a small
// graph the two passes were two launches of a few microseconds each, the second waiting for the
// first although they write different rows; here the medium rows run under the short ones.
// Launched with n_block blocks only, it is the medium rows alone.
template <class T, class I, int V, int NV, int G>
__global__ void __launch_bounds__(256) csr_block_rows_kernel(RowsParams<T, I> p, const int64_t* __restrict__ rows,
                                                             int64_t n_block) {
  if (int64_t(blockIdx.x) < n_block) return block_row<T, I, V, NV, G>(p, rows[blockIdx.x]);
  rows_item<T, I, V, NV, G, false>(p, ((int64_t(blockIdx.x) - n_block) * blockDim.x + threadIdx.x) / G);
}

// Y[long_rows[r], :] = partial[r, :] (+ bias), converted to T.
template <class T>
__global__ void finalize_long_rows_kernel(const int64_t* __restrict__ long_rows, int64_t n_long, int64_t F,
                                          const Acc<T>* __restrict__ partial, const Acc<T>* __restrict__ bias,
                                          T* __restrict__ Y, int64_t ldy) {
  const int64_t total = n_long * F;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / F, f = i % F;
    Y[long_rows[r] * ldy + f] = from_acc<T>(bias ? partial[i] + bias[f] : partial[i]);
  }
}

// Y[r, f] += bias[f] (for the variants whose epilogue cannot fuse it: cuSPARSE, WSB).
template <class T>
__global__ void add_row_bias_kernel(T* __restrict__ Y, int64_t rows, int64_t F, int64_t ldy,
                                    const Acc<T>* __restrict__ bias) {
  const int64_t total = rows * F;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / F, f = i % F;
    T& y = Y[r * ldy + f];
    y = from_acc<T>(to_acc(y) + bias[f]);
  }
}

// SDDMM: each warp owns a run of kEdgesPerWarp consecutive edges (balanced whatever the degree
// distribution), finds the row of its first edge by binary search in rowptr and walks on; lanes
// split the features of each dot product <dY[row], X[col]> and reduce with shuffles.
constexpr int kEdgesPerWarp = 32;

template <class I>
__device__ __forceinline__ int64_t row_of_edge(const I* __restrict__ rowptr, int64_t rows, int64_t e) {
  int64_t lo = 0, hi = rows - 1;  // last row with rowptr[row] <= e (skips empty rows)
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (int64_t(rowptr[mid]) <= e) lo = mid; else hi = mid - 1;
  }
  return lo;
}

template <class T, class I, int V>
__global__ void __launch_bounds__(256) sddmm_edges_kernel(int64_t rows, int64_t nnz, int64_t F,
                                                          const I* __restrict__ rowptr, const I* __restrict__ col,
                                                          const T* __restrict__ dY, int64_t lddy,
                                                          const T* __restrict__ X, int64_t ldx,
                                                          Acc<T>* __restrict__ dw) {
  using W = Acc<T>;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t e_begin = warp * kEdgesPerWarp;
  if (e_begin >= nnz) return;
  const int64_t e_end = min(nnz, e_begin + kEdgesPerWarp);
  const int lane = int(threadIdx.x & 31);
  int64_t row = row_of_edge(rowptr, rows, e_begin);
  int64_t row_end = int64_t(rowptr[row + 1]);
  for (int64_t e = e_begin; e < e_end; ++e) {
    while (e >= row_end) row_end = int64_t(rowptr[++row + 1]);
    const T* __restrict__ dy = dY + row * lddy;
    const T* __restrict__ xr = X + int64_t(col[e]) * ldx;
    W s = W(0);
    for (int64_t f = int64_t(lane) * V; f < F; f += 32 * V) {
      W a[V], b[V];
      load_vec<T, V>(dy + f, a);
      load_vec<T, V>(xr + f, b);
#pragma unroll
      for (int t = 0; t < V; ++t) s += a[t] * b[t];
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) dw[e] = s;
  }
}

// Fills n entries with a value (ones for unweighted graphs, float->double weight conversion).
template <class W>
__global__ void fill_kernel(W* out, int64_t n, W v) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = v;
}
template <class W>
__global__ void convert_kernel(W* out, const float* in, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = W(in[i]);
}

}  // namespace tessera::ops::cuda::kernels
