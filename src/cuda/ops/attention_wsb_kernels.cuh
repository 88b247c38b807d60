#pragma once
// Device code of the tensor-core Graph Transformer forward on the WSB format (launcher:
// attention_wsb.cu; format: include/tessera/format/wsb.hpp). FlashAttention's loop, restricted
// to the occupied 16 x 16 tiles of a sparse graph.
//
// Work split: one warp per (16-row window, head); the 4 warps of a CTA take the heads of the
// same window first (they gather the same source rows, other channels). Per block pair of the
// window (16 source slots) the warp
//   1. gathers the 16 key and value rows of the head into shared memory (cp.async 16-byte
//      chunks, double buffered so the gather of pair p+1 flies while pair p computes);
//   2. S = Q K^T with mma.m16n8k16 (Q's fragments stay in registers for the whole window, K's
//      come from ldmatrix), fp32 accumulation;
//   3. masks the cells the bitmap leaves clear to -inf, and, when the graph has duplicate edges,
//      weights each cell by its multiplicity (the f16 tile of a ones-weighted WSB build: a
//      duplicate counts separately in the softmax, as in the CSR kernels);
//   4. online softmax per row (running max and sum; the four lanes of a quad share a row, so the
//      row max is two shuffles), rescales the output accumulators, and
//   5. O += P V with mma.m16n8k16: P is the rescaled S accumulators rounded to the operand type
//      in place (the accumulator layout of two n-tiles is the A layout of k = 16), V comes from
//      ldmatrix.trans.
// At the end out = O / l and lse = m + log l per row; rows without entries get 0 and -inf.
// Registers: Q (C/4 words) + O (C/2 floats) per lane, so C <= 128.
#include "cuda/ops/spmm_wsb_kernels.cuh"

namespace tessera::cuda::wsb_attention {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarps = 4;   // (window, head) items per CTA
constexpr int kPad = 8;     // elements of padding per shared row (bank spread for ldmatrix)

template <int C> constexpr int row_elems() { return C + kPad; }
// Shared memory of one CTA: per warp, 2 buffers x (K and V tiles of 16 rows).
template <int C, class T> constexpr size_t smem_bytes() {
  return size_t(kWarps) * 2 * 2 * 16 * row_elems<C>() * sizeof(T);
}

template <class T, class I>
struct Params {
  int64_t rows = 0, windows = 0;
  int H = 1;
  const int64_t* window_ptr = nullptr;
  const I* block_cols = nullptr;
  const uint64_t* bitmap = nullptr;
  const __half* mult = nullptr;  // per-cell multiplicities; null when the graph has no duplicates
  const T* q = nullptr; int64_t ldq = 0;
  const T* k = nullptr; int64_t ldk = 0;
  const T* v = nullptr; int64_t ldv = 0;
  T* out = nullptr; int64_t ldo = 0;
  float* lse = nullptr;          // rows x H (optional)
  float scale_log2 = 0;          // logit scale times log2(e): the softmax runs in base 2
};

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(wsb::smem_addr(row_addr))
               : "memory");
}

template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  T two[2] = {wsb::from_float<T>(lo), wsb::from_float<T>(hi)};
  return *reinterpret_cast<const uint32_t*>(two);
}

// 16 rows x C channels of head h from `src` (row ids in lanes 0..15, -1 = empty slot) into sX.
template <class T, int C>
__device__ __forceinline__ void gather_rows(T* sX, const T* src, int64_t ld, int64_t c0, int64_t my_col, int lane) {
  constexpr int kChunk = 16 / sizeof(T);   // elements per 16-byte chunk
  constexpr int kPerRow = C / kChunk;
  static_assert((16 * kPerRow) % 32 == 0, "a warp step must cover whole chunks");
#pragma unroll
  for (int idx = lane; idx < 16 * kPerRow; idx += 32) {
    const int row = idx / kPerRow, chunk = idx % kPerRow;
    const int64_t s = wsb::slot_col(my_col, row);
    const T* from = s >= 0 ? src + s * ld + c0 + chunk * kChunk : src;
    wsb::cp_async16(sX + row * row_elems<C>() + chunk * kChunk, from, s >= 0 ? 16 : 0);
  }
}

template <class T, class I, int C>
__global__ void __launch_bounds__(kWarps * 32) attention_wsb_kernel(Params<T, I> p) {
  static_assert(C % 16 == 0 && C <= 128, "head width: a multiple of 16 up to 128");
  constexpr int KS = C / 16;  // k-steps of Q K^T
  constexpr int NT = C / 8;   // n-tiles of P V
  constexpr int R = row_elems<C>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t item = int64_t(blockIdx.x) * kWarps + warp;
  if (item >= p.windows * p.H) return;  // warp-uniform; no CTA-wide barrier below
  const int64_t window = item / p.H;
  const int h = int(item % p.H);
  const int64_t c0 = int64_t(h) * C;
  T* sbase = reinterpret_cast<T*>(smem_raw) + size_t(warp) * 2 * 2 * 16 * R;
  auto sK = [&](int buf) { return sbase + (2 * buf) * 16 * R; };
  auto sV = [&](int buf) { return sbase + (2 * buf + 1) * 16 * R; };

  const int64_t row0 = window * 16;
  const int g = lane >> 2;
  // Q fragments of the window (rows past `rows` are zeros; their cells are never occupied).
  uint32_t qa[KS][4];
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const mma::RowCol rc = mma::attn_q_a(lane, r);
      const int64_t row = row0 + rc.row;
      qa[s][r] = row < p.rows ? __ldg(reinterpret_cast<const unsigned int*>(p.q + row * p.ldq + c0 + 16 * s + rc.col))
                              : 0u;
    }

  float o[NT][4];
#pragma unroll
  for (int j = 0; j < NT; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY};  // running max of rows g and g + 8 (base-2 logits)
  float l[2] = {0.0f, 0.0f};            // this lane's part of the running sums

  const int64_t b_begin = p.window_ptr[window];
  const int64_t pairs = (p.window_ptr[window + 1] - b_begin) >> 1;
  auto gather = [&](int buf, int64_t pr) {
    const int64_t col = lane < 16 ? int64_t(p.block_cols[(b_begin + 2 * pr) * 8 + lane]) : int64_t(-1);
    gather_rows<T, C>(sK(buf), p.k, p.ldk, c0, col, lane);
    gather_rows<T, C>(sV(buf), p.v, p.ldv, c0, col, lane);
  };

  if (pairs > 0) gather(0, 0);
  wsb::cp_async_commit();
  for (int64_t pr = 0; pr < pairs; ++pr) {
    const int buf = int(pr & 1);
    if (pr + 1 < pairs) gather(buf ^ 1, pr + 1);
    wsb::cp_async_commit();  // possibly empty group: keeps wait_group 1 exact

    // The pair's occupancy (and multiplicities) while the gather lands.
    const int64_t blk = b_begin + 2 * pr;
    uint64_t bits[2][2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      bits[j][0] = __ldg(reinterpret_cast<const unsigned long long*>(p.bitmap) + (blk + j) * 2);
      bits[j][1] = __ldg(reinterpret_cast<const unsigned long long*>(p.bitmap) + (blk + j) * 2 + 1);
    }
    float mult[2][4];
    if (p.mult) {
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const mma::RowCol rc = mma::acc_c(lane, 2 * hh);
          const __half2 two = __ldg(reinterpret_cast<const __half2*>(p.mult + (blk + j) * 128 + rc.row * 8 + rc.col));
          mult[j][2 * hh] = __low2float(two);
          mult[j][2 * hh + 1] = __high2float(two);
        }
    }
    wsb::cp_async_wait_one();
    __syncwarp();

    // S = Q K^T (16 rows x 16 slots).
    float sacc[2][4] = {};
    const mma::RowCol ka = mma::attn_ldsm_k_addr(lane);
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      uint32_t b[4];
      ldsm_x4(b, sK(buf) + ka.row * R + 16 * s + ka.col);
      wsb::mma_k16<T>(sacc[0], qa[s], b[0], b[1]);
      wsb::mma_k16<T>(sacc[1], qa[s], b[2], b[3]);
    }
    // Mask, base-2 logits and the tile's row maxima (rows g: elements 0,1; g + 8: 2,3).
    float tmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const mma::RowCol rc = mma::acc_c(lane, i);
        const int bit = (rc.row & 7) * 8 + rc.col;
        const bool on = (bits[j][rc.row >> 3] >> bit) & 1u;
        sacc[j][i] = on ? sacc[j][i] * p.scale_log2 : -INFINITY;
        tmax[i >> 1] = fmaxf(tmax[i >> 1], sacc[j][i]);
      }
    float corr[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      tmax[hh] = fmaxf(tmax[hh], __shfl_xor_sync(kFull, tmax[hh], 1));
      tmax[hh] = fmaxf(tmax[hh], __shfl_xor_sync(kFull, tmax[hh], 2));
      const float mn = fmaxf(m[hh], tmax[hh]);
      const float base = mn == -INFINITY ? 0.0f : mn;  // a row with no entry yet: keep p = 0, not NaN
      corr[hh] = exp2f(m[hh] - base);                  // exp2(-inf) = 0 on the first entries
      m[hh] = mn;
      l[hh] *= corr[hh];
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = sacc[j][2 * hh + e];
          x = exp2f(x - base);
          if (p.mult) x *= mult[j][2 * hh + e];
          l[hh] += x;
        }
    }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      o[j][0] *= corr[0]; o[j][1] *= corr[0];
      o[j][2] *= corr[1]; o[j][3] *= corr[1];
    }
    // O += P V.
    uint32_t pa[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const mma::AccPair ap = mma::attn_p_from_s(r);
      pa[r] = pack2<T>(sacc[ap.ntile][2 * ap.half], sacc[ap.ntile][2 * ap.half + 1]);
    }
    const mma::RowCol va = mma::wsb_ldsm_addr(lane);
#pragma unroll
    for (int q = 0; q < NT / 2; ++q) {
      uint32_t b[4];
      wsb::ldsm_x4_trans(b, sV(buf) + va.row * R + 16 * q + va.col);
      wsb::mma_k16<T>(o[2 * q], pa, b[0], b[1]);
      wsb::mma_k16<T>(o[2 * q + 1], pa, b[2], b[3]);
    }
    __syncwarp();  // every lane is done reading `buf` before the next iteration refills it
  }

  // Epilogue: the row sums over the quad, out = O / l, lse = ln 2 * (m + log2 l).
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    l[hh] += __shfl_xor_sync(kFull, l[hh], 1);
    l[hh] += __shfl_xor_sync(kFull, l[hh], 2);
  }
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int64_t row = row0 + g + 8 * hh;
    if (row >= p.rows) continue;
    const float inv = l[hh] > 0 ? 1.0f / l[hh] : 0.0f;
    T* dst = p.out + row * p.ldo + c0;
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int c = 8 * j + mma::acc_c(lane, 2 * hh).col;
      *reinterpret_cast<uint32_t*>(dst + c) = pack2<T>(o[j][2 * hh] * inv, o[j][2 * hh + 1] * inv);
    }
    if (p.lse && (lane & 3) == 0)  // lse is optional in the forward, as in the CSR kernels
      p.lse[row * p.H + h] = l[hh] > 0 ? 0.69314718055994531f * (m[hh] + log2f(l[hh])) : -INFINITY;
  }
}

}  // namespace tessera::cuda::wsb_attention
