// CUDA backend of the marginalized graph kernel: many pairs per launch.
//
// A persistent grid (a few blocks per SM) pulls pairs from a work queue (atomic counter); each
// block solves its pair's PCG entirely, its warps sharing the product-graph vectors through a
// fixed scratch slice and the pair's octiles through shared memory (staged once per pair when
// they fit, read from global memory otherwise). Scratch per block is a fixed slice: pairs too
// large for it run in a later launch with fewer, larger slices, so memory is bounded by a budget
// rather than by (largest graph)^2 x blocks.
//
// The mat-vec: a warp owns one 8x8 output block (I, I') and walks the tile pairs (I, J) x (I', J').
// - Dense tile pairs use the Kronecker identity on the tile: with the G tile split into planes A_l
//   of one edge label each, (A (x) B o k_e) x = sum_l A_l X Bt_l^T with Bt_l = B o k_e(l, .), and
//   Z_l = sum_J' X(J,J') Bt_l(I',J')^T accumulated over the row of G' before one A_l Z_l. That is
//   2 x 512 multiply-adds per (tile pair, label) instead of 4096 label-dependent terms, all from
//   registers and shared memory.
// - Sparse tile pairs (few nonzeros, or a G tile with more than kMaxPlanes labels) distribute the
//   nnz x nnz' products over the lanes with shared-memory atomics.
// Large pairs (solved by the whole grid) use the same identity over the whole pair instead when
// the cost model prefers it: Z_l = X Bt_l^T once per label, then Y = sum_l A_l Z_l, two launches
// of dense 8x8 products (octile_sandwich.cuh), the X Bt_l^T part no longer repeated per G tile.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/batch.hpp"
#include "octile_sandwich.cuh"
#include "tessera/core/cuda_check.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kernels::detail {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kMaxPlanes = 4;        // labels of a G tile the dense path splits it into
constexpr int kSandwichPerPlane = 128;  // dense path when nnz x nnz' >= this x planes (cost model)
constexpr int kStageBytes = 16 << 10;   // shared memory per block for the pair's octiles

struct DevGraph {
  int32_t n, blocks, row_ptr, node;  // row_ptr: offset into row_ptr[], node: offset into node arrays
};

struct DevData {
  const DevGraph* graphs;
  const int32_t* row_ptr;   // absolute tile indices
  const int32_t* tile_col;
  const unsigned long long* mask;
  const int32_t* nz_ptr;    // absolute nonzero indices
  const float* weight;
  const uint16_t* label;
  const float* dense_w;     // tiles x 64: every tile expanded (0 where empty)
  const uint16_t* dense_l;  // tiles x 64: edge-label ids
  const int32_t* plane_ptr; // tiles + 1: planes of tile t are [plane_ptr[t], plane_ptr[t+1]) (none: > kMaxPlanes labels)
  const uint16_t* plane_label;
  const float* plane_w;     // planes x 64: the tile's entries of one label
  const double* degree;
  const int32_t* node_label;
  const float* node_attr;
  int attr_dim;
  int L;
};

// Where the mat-vec reads the pair's expanded octiles: shared memory (staged) or global memory.
// Tile tb of G' is at bw/bl[(tb - b0) * 64], plane p of G at aw[(p - a0) * 64].
struct TileSrc {
  const float* bw;
  const uint16_t* bl;
  int32_t b0;
  const float* aw;
  int32_t a0;
};

__device__ TileSrc global_tiles(const DevData& d) { return {d.dense_w, d.dense_l, 0, d.plane_w, 0}; }

struct DevOut {
  double value, residual, exec_flops;  // exec_flops: arithmetic of one mat-vec as executed
  double matvec_seconds, matvec_flops;  // grid-wide pairs: GPU time (events) and executed flops of all mat-vecs
  int32_t iterations, status;  // status: 1 converged, 0 not converged, -1 did not fit (retry)
};

template <class T>
struct alignas(16) Shared {
  T a[kWarps][64], b[kWarps][64], acc[kWarps][64];
  T buf[kWarps][kMaxPlanes * 64];  // dense path: Bt_l tiles, then Z_l
  uint16_t la[kWarps][64], lb[kWarps][64];
  uint8_t pa[kWarps][64], pb[kWarps][64];
  double red[kWarps];
  double bcast;
  int job;
};

__device__ double block_sum(double v, double* red, double* bcast) {
  for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0;
    for (int w = 0; w < kWarps; ++w) s += red[w];
    *bcast = s;
  }
  __syncthreads();
  return *bcast;
}

// out = W in over the output blocks first, first + stride, ... of the pair: the warps of one
// block (first = warp, stride = kWarps) or every warp of the grid (the large-pair path). When
// `flops` is set, each warp adds the arithmetic it executed (2 per multiply-add).
//
// Latency: the tiles of the G' row are read once per output block, one per lane, and handed out
// by shuffles; each dense tile pair's X rows are loaded one tile pair ahead.
template <class T>
__device__ void matvec_w(const DevData& d, const TileSrc& src, const DevGraph& g1, const DevGraph& g2,
                         const T* __restrict__ tab, const T* __restrict__ in, T* __restrict__ out, Shared<T>& sh,
                         int64_t first, int64_t stride, double* flops) {
  constexpr unsigned kAll = 0xffffffffu;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // Dense path: lane owns Z[r][q], Z[r][q + 4] and then Y[r][q], Y[r][q + 4].
  const int r = lane >> 2, q = lane & 3;
  const int B2 = g2.blocks;
  const int64_t nblk = int64_t(g1.blocks) * B2;
  T* sa = sh.a[warp];
  T* sb = sh.b[warp];
  T* acc = sh.acc[warp];
  T* buf = sh.buf[warp];
  double done = 0;
  for (int64_t ob = first; ob < nblk; ob += stride) {
    const int I = int(ob / B2), I2 = int(ob % B2);
    T y0 = 0, y1 = 0;
    acc[lane] = 0;
    acc[lane + 32] = 0;
    const int tb_begin = d.row_ptr[g2.row_ptr + I2], tb_end = d.row_ptr[g2.row_ptr + I2 + 1];
    const int ta_begin = d.row_ptr[g1.row_ptr + I], ta_end = d.row_ptr[g1.row_ptr + I + 1];
    for (int c0 = tb_begin; c0 < tb_end; c0 += 32) {
      // Tile c0 + lane of the G' row: column block, occupancy, first nonzero.
      const int nc = min(32, tb_end - c0);
      int my_col = 0, my_nz = 0;
      unsigned long long my_mask = 0;
      if (lane < nc) {
        my_col = d.tile_col[c0 + lane];
        my_mask = d.mask[c0 + lane];
        my_nz = d.nz_ptr[c0 + lane];
      }
      const int my_nb = __popcll(my_mask);
      for (int ta = ta_begin; ta < ta_end; ++ta) {
        const unsigned long long ma = d.mask[ta];
        const int na = __popcll(ma), za = d.nz_ptr[ta];
        const int J = d.tile_col[ta];
        const int p0 = d.plane_ptr[ta], P = d.plane_ptr[ta + 1] - p0;
        const T* xrow = in + int64_t(J) * B2 * 64 + r * 8;  // + column block * 64
        const unsigned dense = __ballot_sync(kAll, lane < nc && P > 0 && na * my_nb >= kSandwichPerPlane * P);
        const unsigned sparse = __ballot_sync(kAll, lane < nc) & ~dense;
        if (dense) {
          // Z_l += X Bt_l^T over the dense tile pairs: X row r from the vector, Bt_l built in
          // shared memory by the warp; then Y += A_l Z_l.
          T z[kMaxPlanes][2] = {};
          unsigned m = dense;
          int k = __ffs(m) - 1;
          T xr[8];
          load8v(xrow + int64_t(__shfl_sync(kAll, my_col, k)) * 64, xr);
          while (m) {
            k = __ffs(m) - 1;
            m &= m - 1;
            T xn[8];
            if (m) load8v(xrow + int64_t(__shfl_sync(kAll, my_col, __ffs(m) - 1)) * 64, xn);
            const int tb = c0 + k;
            const float* bw = src.bw + int64_t(tb - src.b0) * 64;
            const uint16_t* bl = src.bl + int64_t(tb - src.b0) * 64;
            const float w0 = bw[lane], w1 = bw[lane + 32];
            const int l0 = bl[lane], l1 = bl[lane + 32];
            __syncwarp();
            for (int p = 0; p < P; ++p) {
              const T* trow = tab + int(d.plane_label[p0 + p]) * d.L;
              buf[p * 64 + lane] = T(w0) * trow[l0];
              buf[p * 64 + lane + 32] = T(w1) * trow[l1];
            }
            __syncwarp();
#pragma unroll
            for (int p = 0; p < kMaxPlanes; ++p) {
              if (p >= P) break;
              T b0[8], b1[8];
              load8v(buf + p * 64 + q * 8, b0);
              load8v(buf + p * 64 + (q + 4) * 8, b1);
#pragma unroll
              for (int c2 = 0; c2 < 8; ++c2) {
                z[p][0] += xr[c2] * b0[c2];
                z[p][1] += xr[c2] * b1[c2];
              }
            }
            if (m) {
#pragma unroll
              for (int c2 = 0; c2 < 8; ++c2) xr[c2] = xn[c2];
            }
            done += 1024.0 * P / 32;
          }
          // Y += A_l Z_l: Z_l through shared memory (layout Z[c][r2]), A_l rows from the planes.
          __syncwarp();
#pragma unroll
          for (int p = 0; p < kMaxPlanes; ++p) {
            if (p >= P) break;
            buf[p * 64 + r * 8 + q] = z[p][0];
            buf[p * 64 + r * 8 + q + 4] = z[p][1];
          }
          __syncwarp();
          for (int p = 0; p < P; ++p) {
            const float* ar = src.aw + int64_t(p0 + p - src.a0) * 64 + r * 8;
            const T* zt = buf + p * 64;
#pragma unroll
            for (int c = 0; c < 8; ++c) {
              const T av = T(ar[c]);
              y0 += av * zt[c * 8 + q];
              y1 += av * zt[c * 8 + q + 4];
            }
          }
          done += 1024.0 * P / 32;
        }
        if (sparse) {
          // The G tile's compact nonzeros, decoded once for all its sparse partners.
          __syncwarp();
          for (int bit = lane; bit < 64; bit += 32)
            if ((ma >> bit) & 1) {
              const int kk = __popcll(ma & ((1ull << bit) - 1));
              sa[kk] = T(d.weight[za + kk]);
              sh.la[warp][kk] = d.label[za + kk];
              sh.pa[warp][kk] = uint8_t(bit);
            }
        }
        for (unsigned m = sparse; m; m &= m - 1) {
          // sparse x sparse: nnz*nnz' products over the lanes, added with shared-memory atomics.
          const int k = __ffs(m) - 1;
          const unsigned long long mb = __shfl_sync(kAll, my_mask, k);
          const int nb = __popcll(mb), zb = __shfl_sync(kAll, my_nz, k);
          const T* x = xrow - r * 8 + int64_t(__shfl_sync(kAll, my_col, k)) * 64;
          __syncwarp();
          for (int bit = lane; bit < 64; bit += 32)
            if ((mb >> bit) & 1) {
              const int kk = __popcll(mb & ((1ull << bit) - 1));
              sb[kk] = T(d.weight[zb + kk]);
              sh.lb[warp][kk] = d.label[zb + kk];
              sh.pb[warp][kk] = uint8_t(bit);
            }
          __syncwarp();
          // Product p = ka * nb + kb, p = lane, lane + 32, ...: (ka, kb) stepped without a division.
          const int dq = 32 / nb, dr = 32 % nb;
          int ka = lane / nb, kb = lane % nb;
          for (; ka < na; ka += dq, kb += dr) {
            if (kb >= nb) {
              kb -= nb;
              ++ka;
              if (ka >= na) break;
            }
            const int bA = sh.pa[warp][ka], bB = sh.pb[warp][kb];
            const T v = sa[ka] * sb[kb] * tab[sh.la[warp][ka] * d.L + sh.lb[warp][kb]] * x[(bA & 7) * 8 + (bB & 7)];
            atomicAdd(&acc[(bA >> 3) * 8 + (bB >> 3)], v);
          }
          done += 2.0 * na * nb / 32;
        }
      }
    }
    __syncwarp();
    out[int64_t(ob) * 64 + r * 8 + q] = y0 + acc[r * 8 + q];
    out[int64_t(ob) * 64 + r * 8 + q + 4] = y1 + acc[r * 8 + q + 4];
    __syncwarp();
  }
  if (flops) {
    for (int o = 16; o; o >>= 1) done += __shfl_down_sync(kAll, done, o);
    if (lane == 0 && done > 0) atomicAdd(flops, done);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) mgk_pcg_kernel(DevData d, BaseKernelView kv, const PairJob* jobs,
                                                           int njobs, int* counter, T* scratch, int64_t cap,
                                                           const T* tab, double q, double start, double tol,
                                                           int max_iter, int lmin, DevOut* out) {
  __shared__ Shared<T> sh;
  __shared__ alignas(16) unsigned char stage[kStageBytes];
  T* base = scratch + int64_t(blockIdx.x) * cap;
  const double s = 1.0 / ((1 - q) * (1 - q));
  for (;;) {
    if (threadIdx.x == 0) sh.job = atomicAdd(counter, 1);
    __syncthreads();
    const int job = sh.job;
    __syncthreads();
    if (job >= njobs) return;
    if (out[job].status != -1) continue;  // solved in an earlier launch
    const DevGraph g1 = d.graphs[jobs[job].a], g2 = d.graphs[jobs[job].b];
    const int64_t size = int64_t(g1.blocks) * g2.blocks * 64;
    if (5 * size > cap) continue;  // left for a launch with larger slices
    T *x = base, *r = x + size, *p = r + size, *Ap = p + size, *dg = Ap + size;
    // The pair's octiles in shared memory when they fit: G' expanded (weights, labels), G's planes.
    TileSrc src = global_tiles(d);
    {
      const int tb0 = d.row_ptr[g2.row_ptr], ntb = d.row_ptr[g2.row_ptr + g2.blocks] - tb0;
      const int pl0 = d.plane_ptr[d.row_ptr[g1.row_ptr]], npl = d.plane_ptr[d.row_ptr[g1.row_ptr + g1.blocks]] - pl0;
      if (int64_t(ntb) * 64 * 6 + int64_t(npl) * 64 * 4 <= kStageBytes) {
        float* bw = reinterpret_cast<float*>(stage);
        float* aw = bw + ntb * 64;
        uint16_t* bl = reinterpret_cast<uint16_t*>(aw + npl * 64);
        for (int k = threadIdx.x; k < ntb * 64; k += kThreads) {
          bw[k] = d.dense_w[int64_t(tb0) * 64 + k];
          bl[k] = d.dense_l[int64_t(tb0) * 64 + k];
        }
        for (int k = threadIdx.x; k < npl * 64; k += kThreads) aw[k] = d.plane_w[int64_t(pl0) * 64 + k];
        src = TileSrc{bw, bl, tb0, aw, pl0};
      }
      __syncthreads();
    }
    // diag = D / V, x0 = b / diag = V, value term of lmin.
    double bb = 0, lsum = 0;
    for (int64_t k = threadIdx.x; k < size; k += kThreads) {
      const int64_t blk = k >> 6;
      const int i = int(blk / g2.blocks) * 8 + int((k >> 3) & 7), j = int(blk % g2.blocks) * 8 + int(k & 7);
      if (i < g1.n && j < g2.n) {
        const int ni = g1.node + i, nj = g2.node + j;
        const double v = kv.eval(d.node_label[ni], d.node_attr + int64_t(ni) * d.attr_dim, d.node_label[nj],
                                 d.node_attr + int64_t(nj) * d.attr_dim, d.attr_dim);
        const double vc = v > 1e-30 ? v : 1e-30;
        const double D = d.degree[ni] * d.degree[nj] * s;
        dg[k] = T(D / vc);
        x[k] = T(vc);
        bb += D * D;
        lsum += v;
      } else {
        dg[k] = T(1);
        x[k] = T(0);
      }
    }
    const double bnorm = sqrt(block_sum(bb, sh.red, &sh.bcast));
    const double lterm = lmin == 1 ? block_sum(lsum, sh.red, &sh.bcast) : 0.0;
    // r0 = b - (diag x0 - W x0) = W x0 since diag x0 = b on valid entries.
    matvec_w(d, src, g1, g2, tab, x, r, sh, threadIdx.x >> 5, kWarps, &out[job].exec_flops);
    __syncthreads();
    double rz = 0, rr = 0;
    for (int64_t k = threadIdx.x; k < size; k += kThreads) {
      const T z = r[k] / dg[k];
      p[k] = z;
      rz += double(r[k]) * double(z);
      rr += double(r[k]) * double(r[k]);
    }
    rz = block_sum(rz, sh.red, &sh.bcast);
    double res = bnorm > 0 ? sqrt(block_sum(rr, sh.red, &sh.bcast)) / bnorm : 0.0;
    int it = 0;
    while (res > tol && it < max_iter) {
      matvec_w(d, src, g1, g2, tab, p, Ap, sh, threadIdx.x >> 5, kWarps, static_cast<double*>(nullptr));
      __syncthreads();
      double pAp = 0;
      for (int64_t k = threadIdx.x; k < size; k += kThreads) {
        const T a = dg[k] * p[k] - Ap[k];
        Ap[k] = a;
        pAp += double(p[k]) * double(a);
      }
      pAp = block_sum(pAp, sh.red, &sh.bcast);
      if (!(pAp > 0)) break;
      const T alpha = T(rz / pAp);
      double rz_new = 0;
      rr = 0;
      for (int64_t k = threadIdx.x; k < size; k += kThreads) {
        x[k] += alpha * p[k];
        const T rk = r[k] - alpha * Ap[k];
        r[k] = rk;
        rz_new += double(rk) * double(rk / dg[k]);
        rr += double(rk) * double(rk);
      }
      rz_new = block_sum(rz_new, sh.red, &sh.bcast);
      rr = block_sum(rr, sh.red, &sh.bcast);
      const T beta = T(rz_new / rz);
      rz = rz_new;
      for (int64_t k = threadIdx.x; k < size; k += kThreads) p[k] = r[k] / dg[k] + beta * p[k];
      __syncthreads();
      ++it;
      res = sqrt(rr) / bnorm;
    }
    double xs = 0;
    for (int64_t k = threadIdx.x; k < size; k += kThreads) xs += double(x[k]);
    xs = block_sum(xs, sh.red, &sh.bcast);
    if (threadIdx.x == 0) {
      out[job].value = start * start * (xs - lterm);
      out[job].residual = res;
      out[job].iterations = it;
      out[job].status = res <= tol ? 1 : 0;
    }
    __syncthreads();
  }
}


// ---- Large pairs: one pair over the whole grid --------------------------------------------------
// A pair of 3000-node graphs has ~1.4e5 product blocks; one block of 8 warps would take seconds
// per pair. Such pairs are solved one at a time by a sequence of grid-wide kernels (mat-vec over
// all warps of the grid, then vector updates with atomic reductions into `LargeScalars`); the
// host reads the residual after each iteration. Scratch is 5 product vectors of that one pair.
struct LargeScalars {
  double bb, lsum, rz[2], pAp, rr, xs, exec_flops;
};

// Block reduction of v, one atomicAdd per block into *dst.
__device__ void block_add(double v, double* dst, double* red) {
  for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0;
    for (int w = 0; w < kWarps; ++w) s += red[w];
    atomicAdd(dst, s);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) large_init(DevData d, BaseKernelView kv, DevGraph g1, DevGraph g2,
                                                       T* x, T* dg, double s, LargeScalars* sc) {
  __shared__ double red[kWarps];
  const int64_t size = int64_t(g1.blocks) * g2.blocks * 64;
  double bb = 0, lsum = 0;
  for (int64_t k = blockIdx.x * int64_t(kThreads) + threadIdx.x; k < size; k += int64_t(gridDim.x) * kThreads) {
    const int64_t blk = k >> 6;
    const int i = int(blk / g2.blocks) * 8 + int((k >> 3) & 7), j = int(blk % g2.blocks) * 8 + int(k & 7);
    if (i < g1.n && j < g2.n) {
      const int ni = g1.node + i, nj = g2.node + j;
      const double v = kv.eval(d.node_label[ni], d.node_attr + int64_t(ni) * d.attr_dim, d.node_label[nj],
                               d.node_attr + int64_t(nj) * d.attr_dim, d.attr_dim);
      const double vc = v > 1e-30 ? v : 1e-30;
      const double D = d.degree[ni] * d.degree[nj] * s;
      dg[k] = T(D / vc);
      x[k] = T(vc);
      bb += D * D;
      lsum += v;
    } else {
      dg[k] = T(1);
      x[k] = T(0);
    }
  }
  block_add(bb, &sc->bb, red);
  __syncthreads();
  block_add(lsum, &sc->lsum, red);
}

template <class T>
__global__ void __launch_bounds__(kThreads) large_matvec(DevData d, DevGraph g1, DevGraph g2, const T* tab,
                                                         const T* in, T* out, double* flops) {
  __shared__ Shared<T> sh;
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  matvec_w(d, global_tiles(d), g1, g2, tab, in, out, sh, int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5), warps,
           flops);
}

// After r = W x0: p = r / diag, rz[0] = r.z, rr = r.r.
template <class T>
__global__ void __launch_bounds__(kThreads) large_start(int64_t size, const T* r, const T* dg, T* p, LargeScalars* sc) {
  __shared__ double red[kWarps];
  double rz = 0, rr = 0;
  for (int64_t k = blockIdx.x * int64_t(kThreads) + threadIdx.x; k < size; k += int64_t(gridDim.x) * kThreads) {
    const T z = r[k] / dg[k];
    p[k] = z;
    rz += double(r[k]) * double(z);
    rr += double(r[k]) * double(r[k]);
  }
  block_add(rz, &sc->rz[0], red);
  __syncthreads();
  block_add(rr, &sc->rr, red);
}

// Ap = diag p - W p (W p is in Ap on entry), pAp += p.Ap.
template <class T>
__global__ void __launch_bounds__(kThreads) large_apply(int64_t size, const T* p, const T* dg, T* Ap, LargeScalars* sc) {
  __shared__ double red[kWarps];
  double pAp = 0;
  for (int64_t k = blockIdx.x * int64_t(kThreads) + threadIdx.x; k < size; k += int64_t(gridDim.x) * kThreads) {
    const T a = dg[k] * p[k] - Ap[k];
    Ap[k] = a;
    pAp += double(p[k]) * double(a);
  }
  block_add(pAp, &sc->pAp, red);
}

// x += alpha p, r -= alpha Ap with alpha = rz[cur] / pAp; rz[1-cur] = r.z, rr = r.r.
template <class T>
__global__ void __launch_bounds__(kThreads) large_update(int64_t size, const T* p, const T* Ap, const T* dg, T* x,
                                                         T* r, int cur, LargeScalars* sc) {
  __shared__ double red[kWarps];
  const T alpha = T(sc->pAp > 0 ? sc->rz[cur] / sc->pAp : 0.0);
  double rz = 0, rr = 0;
  for (int64_t k = blockIdx.x * int64_t(kThreads) + threadIdx.x; k < size; k += int64_t(gridDim.x) * kThreads) {
    x[k] += alpha * p[k];
    const T rk = r[k] - alpha * Ap[k];
    r[k] = rk;
    rz += double(rk) * double(rk / dg[k]);
    rr += double(rk) * double(rk);
  }
  block_add(rz, &sc->rz[1 - cur], red);
  __syncthreads();
  block_add(rr, &sc->rr, red);
}

// p = z + beta p, beta = rz[1-cur] / rz[cur].
template <class T>
__global__ void __launch_bounds__(kThreads) large_direction(int64_t size, const T* r, const T* dg, T* p, int cur,
                                                            const LargeScalars* sc) {
  const T beta = T(sc->rz[1 - cur] / sc->rz[cur]);
  for (int64_t k = blockIdx.x * int64_t(kThreads) + threadIdx.x; k < size; k += int64_t(gridDim.x) * kThreads)
    p[k] = r[k] / dg[k] + beta * p[k];
}

template <class T>
__global__ void __launch_bounds__(kThreads) large_sum(int64_t size, const T* x, LargeScalars* sc) {
  __shared__ double red[kWarps];
  double xs = 0;
  for (int64_t k = blockIdx.x * int64_t(kThreads) + threadIdx.x; k < size; k += int64_t(gridDim.x) * kThreads)
    xs += double(x[k]);
  block_add(xs, &sc->xs, red);
}

// ---- The sandwich mat-vec of a large pair (octile_sandwich.cuh) --------------------------------
// Two blocks per SM: 128 registers hold fp32's 4 rows per lane (32 accumulators, 32 inputs) and
// fp64's 2. (fp32 at 2 rows and 80 registers, 3 blocks per SM, ran 11-15% slower on the H200.)
template <class T, class W, int R>
__global__ void __launch_bounds__(kThreads, 2) sandwich_kernel(StageArgs<T, W> a) {
  sandwich_stage<T, W, R>(a, int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5), int64_t(gridDim.x) * kWarps);
}

// fp32 on the tensor cores (sandwich_stage_tf32x3): two blocks per SM (124 registers), stage 1
// (kPlanes false) or stage 2.
template <bool kPlanes>
__global__ void __launch_bounds__(kThreads, 2) sandwich_tf32x3_kernel(StageArgs<float, float> a) {
  sandwich_stage_tf32x3<kPlanes>(a, int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5), int64_t(gridDim.x) * kWarps);
}

// fp32 sandwiches run on the tensor cores unless TESSERA_MGK_TF32=0 (the FFMA stages: A/B runs, tests).
bool sandwich_tensor_cores() {
  const char* env = std::getenv("TESSERA_MGK_TF32");
  return !(env && std::string(env) == "0");
}

// Entry e of a transposed 8x8 tile (c * 8 + s) -> its index in the row-major tile (s * 8 + c),
// tiles in a row: the stages read their weights transposed (octile_sandwich.cuh).
__device__ __forceinline__ int64_t row_major_of_transposed(int64_t e) {
  return (e & ~int64_t(63)) + (e & 7) * 8 + ((e >> 3) & 7);
}

// The stages' weights: Bt_l of every G' tile for each label l of G,
// bt[(l * tiles + t) * 64 + c * 8 + s] = B_t[s][c] k_e(labels[l], label_t[s][c]) ...
template <class T>
__global__ void expand_bt_kernel(const float* dense_w, const uint16_t* dense_l, int32_t tb0, int64_t tiles,
                                 const T* tab, int L, const int32_t* labels, int nl, T* bt) {
  const int64_t per = tiles * 64, total = per * nl;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < total; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t src = int64_t(tb0) * 64 + row_major_of_transposed(k % per);
    bt[k] = T(dense_w[src]) * tab[int64_t(labels[k / per]) * L + dense_l[src]];
  }
}
// ... and G's planes [pl0, pl0 + planes): at[p * 64 + c * 8 + s] = A_p[s][c].
__global__ void transpose_planes_kernel(const float* plane_w, int32_t pl0, int64_t planes, float* at) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < planes * 64; k += int64_t(gridDim.x) * blockDim.x)
    at[k] = plane_w[int64_t(pl0) * 64 + row_major_of_transposed(k)];
}

// The host's copy of the packed tiles, to plan a pair's mat-vec.
struct HostTiles {
  const std::vector<int32_t>& row_ptr;
  const std::vector<int32_t>& nz_ptr;
  const std::vector<int32_t>& plane_ptr;
  const std::vector<uint16_t>& plane_label;
};

constexpr int kSandwichMaxLabels = 8;  // stage 1 keeps one product vector Z_l per label of G
// Cost model: a dense multiply-add of the sandwich against one product of the direct sparse path
// (index decode, table lookup, shared-memory atomic): the sandwich runs when its multiply-adds are
// at most this many times the direct product's nnz x nnz'.
constexpr double kSandwichGain = 4;

struct SandwichPlan {
  bool use = false;
  std::vector<int32_t> labels;    // distinct plane labels of G
  std::vector<int32_t> plane_in;  // per plane of G: its label's index in `labels`
  int32_t tb0 = 0, pl0 = 0;       // first tile of G', first plane of G
  int64_t tiles2 = 0;             // tiles of G'
  double exec_flops = 0;          // arithmetic of one mat-vec (2 per multiply-add)
};

// The sandwich needs every tile of G split into planes, few labels, and memory for Z_l: one product
// vector (`vector_bytes`) per label beside the direct path's five, so that a pair that fits only
// without them takes the direct path rather than running out of memory. TESSERA_MGK_SANDWICH=0 or
// 1 overrides the cost model (never / whenever possible), for A/B runs and tests.
SandwichPlan plan_sandwich(const HostTiles& h, const DevGraph& g1, const DevGraph& g2, double vector_bytes) {
  SandwichPlan p;
  const int32_t ta0 = h.row_ptr[size_t(g1.row_ptr)], ta1 = h.row_ptr[size_t(g1.row_ptr + g1.blocks)];
  p.tb0 = h.row_ptr[size_t(g2.row_ptr)];
  const int32_t tb1 = h.row_ptr[size_t(g2.row_ptr + g2.blocks)];
  p.tiles2 = tb1 - p.tb0;
  p.pl0 = h.plane_ptr[size_t(ta0)];
  for (int32_t t = ta0; t < ta1; ++t)
    if (h.plane_ptr[size_t(t) + 1] == h.plane_ptr[size_t(t)]) return p;  // a tile of too many labels
  for (int32_t q = p.pl0; q < h.plane_ptr[size_t(ta1)]; ++q) {
    const int32_t lab = h.plane_label[size_t(q)];
    auto it = std::find(p.labels.begin(), p.labels.end(), lab);
    if (it == p.labels.end()) {
      if (int(p.labels.size()) == kSandwichMaxLabels) return p;
      it = p.labels.insert(p.labels.end(), lab);
    }
    p.plane_in.push_back(int32_t(it - p.labels.begin()));
  }
  const double planes = double(p.plane_in.size());
  const double fma = 64.0 * (8.0 * g1.blocks * double(p.tiles2) * double(p.labels.size()) + 8.0 * g2.blocks * planes);
  const double nnz1 = h.nz_ptr[size_t(ta1)] - h.nz_ptr[size_t(ta0)], nnz2 = h.nz_ptr[size_t(tb1)] - h.nz_ptr[size_t(p.tb0)];
  p.exec_flops = 2 * fma;
  const char* env = std::getenv("TESSERA_MGK_SANDWICH");
  const std::string force = env ? env : "";
  p.use = force == "1" || (force != "0" && fma <= kSandwichGain * nnz1 * nnz2);
  if (p.use) {
    size_t free_b = 0, total_b = 0;
    TESSERA_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    p.use = vector_bytes * (5.0 + double(p.labels.size())) <= 0.8 * double(free_b);
  }
  return p;
}

// The sandwich mat-vec of one pair: Bt_l of G' (fixed for the solve), G's planes transposed, the
// plane -> label map, Z_l; run() is stage 1 then stage 2.
template <class T>
class SandwichMatvec {
 public:
  SandwichMatvec(const DevData& d, const SandwichPlan& plan, const DevGraph& g1, const DevGraph& g2, const T* tab,
                 const Exec& exec, cudaStream_t st, int grid, int device)
      : nl_(int(plan.labels.size())),
        size_(int64_t(g1.blocks) * g2.blocks * 64),
        z_(exec, size_t(size_) * size_t(nl_) * sizeof(T)),
        bt_(exec, std::max<size_t>(1, size_t(plan.tiles2) * 64 * size_t(nl_) * sizeof(T))),
        at_(exec, std::max<size_t>(1, plan.plane_in.size() * 64 * sizeof(float))),
        lab_(exec, plan.labels.size() * sizeof(int32_t)),
        pin_(exec, std::max<size_t>(1, plan.plane_in.size() * sizeof(int32_t))) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(lab_.get(), plan.labels.data(), plan.labels.size() * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, st));
    if (!plan.plane_in.empty())
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(pin_.get(), plan.plane_in.data(), plan.plane_in.size() * sizeof(int32_t),
                                         cudaMemcpyHostToDevice, st));
    const int64_t nbt = plan.tiles2 * 64 * nl_, nat = int64_t(plan.plane_in.size()) * 64;
    auto blocks = [&](int64_t n) { return int(std::max<int64_t>(1, std::min<int64_t>(grid, (n + kThreads - 1) / kThreads))); };
    if (nat > 0) {
      transpose_planes_kernel<<<blocks(nat), kThreads, 0, st>>>(d.plane_w, plan.pl0, nat / 64, at_.as<float>());
      TESSERA_CUDA_LAUNCH_CHECK();
    }
    if (nbt > 0) {
      expand_bt_kernel<T><<<blocks(nbt), kThreads, 0, st>>>(d.dense_w, d.dense_l, plan.tb0, plan.tiles2, tab, d.L,
                                                           lab_.as<int32_t>(), nl_, bt_.as<T>());
      TESSERA_CUDA_LAUNCH_CHECK();
    }
    // Stage 1: Z_l^T = (X Bt_l^T)^T over the tile rows of G'; stage 2: Y = sum_l A_l Z_l over G's.
    s1_ = StageArgs<T, T>{d.row_ptr + g2.row_ptr, d.tile_col, nullptr, bt_.as<T>(), plan.tb0, 0, nullptr,
                          nullptr, 0, z_.as<T>(), size_, plan.tiles2, g2.blocks, g2.blocks, g1.blocks, nl_};
    s2_ = StageArgs<T, float>{d.row_ptr + g1.row_ptr, d.tile_col, d.plane_ptr, at_.as<float>(), 0, plan.pl0,
                              pin_.as<int32_t>(), z_.as<T>(), size_, nullptr, 0, 0, g1.blocks, g1.blocks, g2.blocks, 1};
    const int sms = cuda_multiprocessors(device);
    if constexpr (std::is_same_v<T, float>) tf32x3_ = sandwich_tensor_cores();
    grid1_ = grid_of(s1_, sms, stage1());
    grid2_ = grid_of(s2_, sms, stage2());
  }

  void run(const T* in, T* out, cudaStream_t st) {
    s1_.in = in;
    s2_.out = out;
    stage1()<<<grid1_, kThreads, 0, st>>>(s1_);
    TESSERA_CUDA_LAUNCH_CHECK();
    stage2()<<<grid2_, kThreads, 0, st>>>(s2_);
    TESSERA_CUDA_LAUNCH_CHECK();
  }

 private:
  static constexpr int kRows = sandwich_rows<T>();
  // The stage kernels: fp32 on the tensor cores unless tf32x3_ is off.
  auto stage1() const -> void (*)(StageArgs<T, T>) {
    if constexpr (std::is_same_v<T, float>)
      if (tf32x3_) return sandwich_tf32x3_kernel<false>;
    return sandwich_kernel<T, T, kRows>;
  }
  auto stage2() const -> void (*)(StageArgs<T, float>) {
    if constexpr (std::is_same_v<T, float>)
      if (tf32x3_) return sandwich_tf32x3_kernel<true>;
    return sandwich_kernel<T, float, kRows>;
  }
  // The stage's warp items over the blocks resident at once (at most).
  template <class W>
  int grid_of(const StageArgs<T, W>& a, int sms, void (*k)(StageArgs<T, W>)) const {
    int per = 0;
    TESSERA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, kThreads, 0));
    const int rows = tf32x3_ ? 16 * kSandwichTiles : 32 * kRows;  // rows per work item
    const int64_t items = int64_t(a.groups) * a.rows * ((a.in_rblocks * 8 + rows - 1) / rows);
    TESSERA_CHECK(items < (int64_t(1) << 31), "graph kernel: a pair of ", a.rows, " x ", a.in_rblocks,
                  " blocks has too many sandwich work items (", items, ") for 32-bit indices");
    return int(std::max<int64_t>(1, std::min<int64_t>(int64_t(sms) * std::max(1, per), (items + kWarps - 1) / kWarps)));
  }

  int nl_;
  int64_t size_;
  Scratch z_, bt_, at_, lab_, pin_;
  StageArgs<T, T> s1_{};
  StageArgs<T, float> s2_{};
  bool tf32x3_ = false;  // fp32 stages on the tensor cores
  int grid1_ = 1, grid2_ = 1;
};

// Solves one pair with the whole grid; fills `o` (status 1 converged, 0 not).
template <class T>
void solve_large_pair(const DevData& d, const BaseKernelView& kv, const DevGraph& g1, const DevGraph& g2, const T* tab,
                      const SandwichPlan& plan, const Options& opt, const Exec& exec, cudaStream_t st, int grid,
                      DevOut& o) {
  const int64_t size = int64_t(g1.blocks) * g2.blocks * 64;
  Scratch work(exec, size_t(size) * 5 * sizeof(T));
  Scratch scal(exec, sizeof(LargeScalars));
  T *x = work.as<T>(), *r = x + size, *p = r + size, *Ap = p + size, *dg = Ap + size;
  auto* sc = scal.as<LargeScalars>();
  TESSERA_CUDA_CHECK(cudaMemsetAsync(sc, 0, sizeof(LargeScalars), st));
  const double q = opt.q, tol = opt.tolerance();
  const int vgrid = int(std::min<int64_t>(grid, (size + kThreads - 1) / kThreads));
  large_init<T><<<vgrid, kThreads, 0, st>>>(d, kv, g1, g2, x, dg, 1.0 / ((1 - q) * (1 - q)), sc);
  TESSERA_CUDA_LAUNCH_CHECK();
  std::optional<SandwichMatvec<T>> sandwich;
  if (plan.use) sandwich.emplace(d, plan, g1, g2, tab, exec, st, grid, opt.device.index);
  CudaEventPair ev;  // around each mat-vec: its GPU time, reported with its flops
  // out = W in (r0 = W x0 first, with the direct path counting its executed flops).
  auto matvec = [&](const T* in, T* out, double* flops) {
    ev.start(st);
    if (sandwich) {
      sandwich->run(in, out, st);
    } else {
      large_matvec<T><<<grid, kThreads, 0, st>>>(d, g1, g2, tab, in, out, flops);
      TESSERA_CUDA_LAUNCH_CHECK();
    }
    ev.stop(st);
  };
  matvec(x, r, &sc->exec_flops);  // r0 = W x0 (diag x0 = b)
  large_start<T><<<vgrid, kThreads, 0, st>>>(size, r, dg, p, sc);
  TESSERA_CUDA_LAUNCH_CHECK();
  LargeScalars h{};
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, st));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(st));
  double matvec_s = ev.elapsed_ms() * 1e-3;
  int matvecs = 1;
  const double bnorm = std::sqrt(h.bb);
  double res = bnorm > 0 ? std::sqrt(h.rr) / bnorm : 0.0;
  int it = 0, cur = 0;
  while (res > tol && it < opt.max_iter) {
    // zero pAp, rr and the rz slot this iteration writes
    TESSERA_CUDA_CHECK(cudaMemsetAsync(&sc->pAp, 0, 2 * sizeof(double), st));
    TESSERA_CUDA_CHECK(cudaMemsetAsync(&sc->rz[1 - cur], 0, sizeof(double), st));
    matvec(p, Ap, nullptr);
    large_apply<T><<<vgrid, kThreads, 0, st>>>(size, p, dg, Ap, sc);
    TESSERA_CUDA_LAUNCH_CHECK();
    large_update<T><<<vgrid, kThreads, 0, st>>>(size, p, Ap, dg, x, r, cur, sc);
    TESSERA_CUDA_LAUNCH_CHECK();
    large_direction<T><<<vgrid, kThreads, 0, st>>>(size, r, dg, p, cur, sc);
    TESSERA_CUDA_LAUNCH_CHECK();
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, st));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(st));
    matvec_s += ev.elapsed_ms() * 1e-3;
    ++matvecs;
    if (!(h.pAp > 0)) break;  // as the one-block solver: breakdown ends the iteration (not converged)
    cur = 1 - cur;
    ++it;
    res = std::sqrt(h.rr) / bnorm;
  }
  large_sum<T><<<vgrid, kThreads, 0, st>>>(size, x, sc);
  TESSERA_CUDA_LAUNCH_CHECK();
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, st));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(st));
  o.value = opt.start * opt.start * (h.xs - (opt.lmin == 1 ? h.lsum : 0.0));
  o.residual = res;
  o.iterations = it;
  o.status = res <= tol ? 1 : 0;
  o.exec_flops = plan.use ? plan.exec_flops : h.exec_flops;
  o.matvec_seconds = matvec_s;
  o.matvec_flops = matvecs * o.exec_flops;
}

// Appends the tiles of g expanded to 8x8 (weights, label ids) and split into planes of one edge
// label each (none for a tile of more than kMaxPlanes labels: it always takes the sparse path).
void append_expanded_tiles(const OctileGraph& g, std::vector<float>& dense_w, std::vector<uint16_t>& dense_l,
                           std::vector<int32_t>& plane_ptr, std::vector<uint16_t>& plane_label,
                           std::vector<float>& plane_w) {
  for (int64_t t = 0; t < g.tiles(); ++t) {
    float w[64] = {};
    uint16_t l[64] = {};
    int k = g.nz_ptr[size_t(t)];
    for (int bit = 0; bit < 64; ++bit)
      if ((g.mask[size_t(t)] >> bit) & 1) {
        w[bit] = g.weight[size_t(k)];
        l[bit] = g.label[size_t(k)];
        ++k;
      }
    dense_w.insert(dense_w.end(), w, w + 64);
    dense_l.insert(dense_l.end(), l, l + 64);
    plane_ptr.push_back(int32_t(plane_label.size()));
    uint16_t labels[64];
    const int nl = tile_labels(g, t, labels);
    if (nl > kMaxPlanes) continue;
    for (int s = 0; s < nl; ++s) {
      const uint16_t lab = labels[s];
      plane_label.push_back(lab);
      for (int bit = 0; bit < 64; ++bit) plane_w.push_back(l[bit] == lab ? w[bit] : 0.0f);
    }
  }
}

template <class V>
V* upload(const std::vector<V>& h, Scratch& s, cudaStream_t st) {
  if (!h.empty()) TESSERA_CUDA_CHECK(cudaMemcpyAsync(s.get(), h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice, st));
  return s.as<V>();
}

template <class T>
void run(const BatchInput& in, const std::vector<PairJob>& jobs, std::vector<JobOutput>& out) {
  const Options& opt = *in.options;
  TESSERA_CHECK(!in.gradient, "graph kernel: gradients are computed on the CPU backend only (use device cpu)");
  const Exec exec{opt.device, opt.stream, nullptr, 0};
  cudaStream_t st = cuda_stream(opt.stream);
  TESSERA_CUDA_CHECK(cudaSetDevice(opt.device.index));
  // Pack both graph lists (once when they are the same list).
  const bool same = in.left == in.right;
  std::vector<const PreparedGraph*> all;
  for (const auto& g : *in.left) all.push_back(&g);
  if (!same)
    for (const auto& g : *in.right) all.push_back(&g);
  const int32_t right_off = same ? 0 : int32_t(in.left->size());
  std::vector<DevGraph> graphs;
  std::vector<int32_t> row_ptr, tile_col, nz_ptr, node_label;
  std::vector<unsigned long long> mask;
  std::vector<float> weight, node_attr, dense_w, plane_w;
  std::vector<uint16_t> label, dense_l, plane_label;
  std::vector<int32_t> plane_ptr;
  std::vector<double> degree;
  int attr_dim = all.empty() ? 0 : all[0]->attr_dim;
  int64_t max_size = 0;
  for (const auto* g : all) {
    TESSERA_CHECK(g->attr_dim == attr_dim, "graph kernel: attribute dimensions differ between graphs");
    graphs.push_back({int32_t(g->n), int32_t(g->tiles.blocks), int32_t(row_ptr.size()), int32_t(degree.size())});
    const int32_t toff = int32_t(tile_col.size()), zoff = int32_t(weight.size());
    for (auto v : g->tiles.row_ptr) row_ptr.push_back(v + toff);
    tile_col.insert(tile_col.end(), g->tiles.tile_col.begin(), g->tiles.tile_col.end());
    mask.insert(mask.end(), g->tiles.mask.begin(), g->tiles.mask.end());
    for (int64_t t = 0; t < g->tiles.tiles(); ++t) nz_ptr.push_back(g->tiles.nz_ptr[size_t(t)] + zoff);
    weight.insert(weight.end(), g->tiles.weight.begin(), g->tiles.weight.end());
    label.insert(label.end(), g->tiles.label.begin(), g->tiles.label.end());
    append_expanded_tiles(g->tiles, dense_w, dense_l, plane_ptr, plane_label, plane_w);
    degree.insert(degree.end(), g->degree.begin(), g->degree.end());
    node_label.insert(node_label.end(), g->node_label.begin(), g->node_label.end());
    node_attr.insert(node_attr.end(), g->node_attr.begin(), g->node_attr.end());
  }
  nz_ptr.push_back(int32_t(weight.size()));  // unused sentinel
  plane_ptr.push_back(int32_t(plane_label.size()));
  // Pairs of more than kLargeBlocks product blocks go to the grid-wide path (solve_large_pair);
  // the persistent kernel skips them (their status is set before it runs).
  constexpr int64_t kLargeBlocks = 4096;
  auto product_blocks = [&](const PairJob& j) { return int64_t(graphs[size_t(j.a)].blocks) * graphs[size_t(j.b)].blocks; };
  std::vector<PairJob> djobs = jobs;
  std::vector<size_t> large;
  for (size_t k = 0; k < djobs.size(); ++k) {
    auto& j = djobs[k];
    j.b += right_off;
    if (product_blocks(j) > kLargeBlocks) large.push_back(k);
    else max_size = std::max<int64_t>(max_size, product_blocks(j) * 64);
  }
  const std::vector<T> tab(in.table->value.begin(), in.table->value.end());
  auto bytes = [](const auto& v) { return std::max<size_t>(1, v.size() * sizeof(v[0])); };
  Scratch s_graphs(exec, bytes(graphs)), s_row(exec, bytes(row_ptr)), s_col(exec, bytes(tile_col)),
      s_mask(exec, bytes(mask)), s_nz(exec, bytes(nz_ptr)), s_w(exec, bytes(weight)), s_l(exec, bytes(label)),
      s_dw(exec, bytes(dense_w)), s_dl(exec, bytes(dense_l)), s_pp(exec, bytes(plane_ptr)),
      s_pl(exec, bytes(plane_label)), s_pw(exec, bytes(plane_w)),
      s_deg(exec, bytes(degree)), s_nl(exec, bytes(node_label)), s_na(exec, bytes(node_attr)),
      s_tab(exec, bytes(tab)), s_jobs(exec, bytes(djobs)), s_out(exec, sizeof(DevOut) * std::max<size_t>(1, jobs.size())),
      s_counter(exec, sizeof(int));
  DevData d{upload(graphs, s_graphs, st), upload(row_ptr, s_row, st), upload(tile_col, s_col, st),
            upload(mask, s_mask, st), upload(nz_ptr, s_nz, st), upload(weight, s_w, st), upload(label, s_l, st),
            upload(dense_w, s_dw, st), upload(dense_l, s_dl, st), upload(plane_ptr, s_pp, st),
            upload(plane_label, s_pl, st), upload(plane_w, s_pw, st),
            upload(degree, s_deg, st), upload(node_label, s_nl, st), upload(node_attr, s_na, st), attr_dim,
            in.table->size()};
  const T* dtab = upload(tab, s_tab, st);
  const PairJob* dj = upload(djobs, s_jobs, st);
  std::vector<DevOut> hout(jobs.size(), DevOut{0, 0, 0, 0, 0, 0, -1});
  const int sms = cuda_multiprocessors(opt.device.index);
  int per_sm = 0;
  TESSERA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mgk_pcg_kernel<T>, kThreads, 0));
  const int full_grid = std::max(1, sms * std::max(1, per_sm));
  const BaseKernelView kv = opt.node_kernel.view();
  for (size_t l = 0; l < large.size(); ++l) {
    const auto& j = djobs[large[l]];
    const DevGraph &g1 = graphs[size_t(j.a)], &g2 = graphs[size_t(j.b)];
    const SandwichPlan plan = plan_sandwich(HostTiles{row_ptr, nz_ptr, plane_ptr, plane_label}, g1, g2,
                                            double(g1.blocks) * g2.blocks * 64 * sizeof(T));
    solve_large_pair<T>(d, kv, g1, g2, dtab, plan, opt, exec, st, full_grid, hout[large[l]]);
    if (opt.progress) opt.progress(int64_t(l + 1), int64_t(jobs.size()));
  }
  DevOut* dout = upload(hout, s_out, st);
  // Scratch budget: a quarter of free memory, at most 8 GiB. Slices hold 5 product vectors.
  size_t free_b = 0, total_b = 0;
  TESSERA_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const size_t budget = std::min<size_t>(free_b / 4, size_t(8) << 30);
  // Launch with small slices first (all blocks busy), then larger slices for the remaining pairs.
  int64_t cap = std::min<int64_t>(max_size * 5, int64_t(budget / sizeof(T) / size_t(full_grid)));
  cap = std::max<int64_t>(cap, 5 * 64);
  for (;;) {
    if (large.size() == jobs.size()) break;  // nothing left for the persistent kernel
    const int64_t grid64 = std::min<int64_t>(full_grid, std::max<int64_t>(1, int64_t(budget / sizeof(T)) / cap));
    const int grid = int(grid64);
    Scratch work(exec, size_t(cap) * size_t(grid) * sizeof(T));
    TESSERA_CUDA_CHECK(cudaMemsetAsync(s_counter.get(), 0, sizeof(int), st));
    mgk_pcg_kernel<T><<<grid, kThreads, 0, st>>>(d, kv, dj, int(jobs.size()), s_counter.as<int>(), work.as<T>(), cap,
                                                  dtab, opt.q, opt.start, opt.tolerance(), opt.max_iter, opt.lmin, dout);
    TESSERA_CUDA_LAUNCH_CHECK();
    if (cap >= max_size * 5) break;
    TESSERA_CHECK(cap * 2 <= int64_t(budget / sizeof(T)) || cap < max_size * 5,
                  "graph kernel: a pair needs ", max_size * 5 * sizeof(T), " bytes of scratch, over the budget");
    const int64_t next = std::min<int64_t>(max_size * 5, cap * 8);
    TESSERA_CHECK(next <= int64_t(budget / sizeof(T)), "graph kernel: a pair of ", max_size / 64,
                  " product blocks needs ", next * sizeof(T), " bytes of scratch, more than the budget of ", budget);
    cap = next;
  }
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(hout.data(), dout, hout.size() * sizeof(DevOut), cudaMemcpyDeviceToHost, st));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(st));
  out.assign(jobs.size(), JobOutput{});
  for (size_t k = 0; k < jobs.size(); ++k) {
    TESSERA_CHECK(hout[k].status != -1, "graph kernel: CUDA pair ", k, " was not scheduled (internal error)");
    out[k].value = hout[k].value;
    out[k].stats.iterations = hout[k].iterations;
    out[k].stats.residual = hout[k].residual;
    out[k].stats.converged = hout[k].status == 1;
    const auto& a = *all[size_t(djobs[k].a)];
    const auto& b = *all[size_t(djobs[k].b)];
    const double vector_flops = 2.0 * double(a.tiles.blocks * b.tiles.blocks * 64);
    out[k].flops = double(hout[k].iterations + 1) * (2.0 * double(a.tiles.nnz()) * double(b.tiles.nnz()) + vector_flops);
    out[k].exec_flops = double(hout[k].iterations + 1) * (hout[k].exec_flops + vector_flops);
    out[k].matvec_seconds = hout[k].matvec_seconds;
    out[k].matvec_kernel_flops = hout[k].matvec_flops;
  }
  if (opt.progress) opt.progress(int64_t(jobs.size()), int64_t(jobs.size()));
}
}  // namespace

void solve_batch_cuda(const BatchInput& in, const std::vector<PairJob>& jobs, std::vector<JobOutput>& out) {
  TESSERA_CHECK(in.options->start > 0, "graph kernel: start weight must be > 0");
  if (in.options->dtype == DType::f32) return run<float>(in, jobs, out);
  return run<double>(in, jobs, out);
}

}  // namespace tessera::kernels::detail
