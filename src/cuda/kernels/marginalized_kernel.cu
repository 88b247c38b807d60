// CUDA backend of the marginalized graph kernel: many pairs per launch.
//
// A persistent grid (a few blocks per SM) pulls pairs from a work queue (atomic counter); each
// block solves its pair's PCG entirely, its warps sharing the product-graph vectors through a
// fixed scratch slice. The mat-vec walks octile pairs: a warp owns one 8x8 output block, decodes
// the two tiles into shared memory (dense form) and either runs the dense 64x64 product (one
// output per lane pair) or, for sparse tile pairs, distributes the nnz x nnz' products over the
// lanes with shared-memory atomics. Scratch per block is a fixed slice: pairs too large for it
// run in a later launch with fewer, larger slices, so memory is bounded by a budget rather than
// by (largest graph)^2 x blocks.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/batch.hpp"
#include "tessera/core/cuda_check.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kernels::detail {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

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
  const double* degree;
  const int32_t* node_label;
  const float* node_attr;
  int attr_dim;
  int L;
};

struct DevOut {
  double value, residual;
  int32_t iterations, status;  // status: 1 converged, 0 not converged, -1 did not fit (retry)
};

template <class T>
struct Shared {
  T a[kWarps][64], b[kWarps][64], acc[kWarps][64];
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
// block (first = warp, stride = kWarps) or every warp of the grid (the large-pair path).
template <class T>
__device__ void matvec_w(const DevData& d, const DevGraph& g1, const DevGraph& g2, const T* __restrict__ tab,
                         const T* __restrict__ in, T* __restrict__ out, Shared<T>& sh, int64_t first,
                         int64_t stride) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int B2 = g2.blocks;
  const int64_t nblk = int64_t(g1.blocks) * B2;
  T* sa = sh.a[warp];
  T* sb = sh.b[warp];
  T* acc = sh.acc[warp];
  for (int64_t ob = first; ob < nblk; ob += stride) {
    const int I = int(ob / B2), I2 = int(ob % B2);
    T acc0 = 0, acc1 = 0;
    acc[lane] = 0;
    acc[lane + 32] = 0;
    for (int ta = d.row_ptr[g1.row_ptr + I]; ta < d.row_ptr[g1.row_ptr + I + 1]; ++ta) {
      const unsigned long long ma = d.mask[ta];
      const int na = __popcll(ma), za = d.nz_ptr[ta];
      const int J = d.tile_col[ta];
      for (int tb = d.row_ptr[g2.row_ptr + I2]; tb < d.row_ptr[g2.row_ptr + I2 + 1]; ++tb) {
        const unsigned long long mb = d.mask[tb];
        const int nb = __popcll(mb), zb = d.nz_ptr[tb];
        const T* x = in + (int64_t(J) * B2 + d.tile_col[tb]) * 64;
        __syncwarp();
        if (na * nb <= 1024) {
          // sparse x sparse: compact nonzeros in shared memory, nnz*nnz' products over the lanes.
          for (int bit = lane; bit < 64; bit += 32) {
            const unsigned long long below = (1ull << bit) - 1;
            if ((ma >> bit) & 1) {
              const int k = __popcll(ma & below);
              sa[k] = T(d.weight[za + k]);
              sh.la[warp][k] = d.label[za + k];
              sh.pa[warp][k] = uint8_t(bit);
            }
            if ((mb >> bit) & 1) {
              const int k = __popcll(mb & below);
              sb[k] = T(d.weight[zb + k]);
              sh.lb[warp][k] = d.label[zb + k];
              sh.pb[warp][k] = uint8_t(bit);
            }
          }
          __syncwarp();
          for (int p = lane; p < na * nb; p += 32) {
            const int ka = p / nb, kb = p % nb;
            const int bA = sh.pa[warp][ka], bB = sh.pb[warp][kb];
            const T v = sa[ka] * sb[kb] * tab[sh.la[warp][ka] * d.L + sh.lb[warp][kb]] * x[(bA & 7) * 8 + (bB & 7)];
            atomicAdd(&acc[(bA >> 3) * 8 + (bB >> 3)], v);
          }
        } else {
          // dense x dense: tiles expanded to 8x8 in shared memory, 64 outputs x 64 terms per warp.
          for (int bit = lane; bit < 64; bit += 32) {
            const unsigned long long below = (1ull << bit) - 1;
            const bool ia = (ma >> bit) & 1, ib = (mb >> bit) & 1;
            const int kA = __popcll(ma & below), kB = __popcll(mb & below);
            sa[bit] = ia ? T(d.weight[za + kA]) : T(0);
            sh.la[warp][bit] = ia ? d.label[za + kA] : 0;
            sb[bit] = ib ? T(d.weight[zb + kB]) : T(0);
            sh.lb[warp][bit] = ib ? d.label[zb + kB] : 0;
          }
          __syncwarp();
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int o = lane + 32 * h, r = o >> 3, r2 = o & 7;
            T s = 0;
            for (int c = 0; c < 8; ++c) {
              const T av = sa[r * 8 + c];
              if (av == T(0)) continue;
              const T* trow = tab + sh.la[warp][r * 8 + c] * d.L;
              T s2 = 0;
#pragma unroll
              for (int c2 = 0; c2 < 8; ++c2) s2 += sb[r2 * 8 + c2] * trow[sh.lb[warp][r2 * 8 + c2]] * x[c * 8 + c2];
              s += av * s2;
            }
            if (h == 0) acc0 += s;
            else acc1 += s;
          }
        }
        __syncwarp();
      }
    }
    __syncwarp();
    out[int64_t(ob) * 64 + lane] = acc0 + acc[lane];
    out[int64_t(ob) * 64 + lane + 32] = acc1 + acc[lane + 32];
    __syncwarp();
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) mgk_pcg_kernel(DevData d, BaseKernelView kv, const PairJob* jobs,
                                                           int njobs, int* counter, T* scratch, int64_t cap,
                                                           const T* tab, double q, double start, double tol,
                                                           int max_iter, int lmin, DevOut* out) {
  __shared__ Shared<T> sh;
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
    matvec_w(d, g1, g2, tab, x, r, sh, threadIdx.x >> 5, kWarps);
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
      matvec_w(d, g1, g2, tab, p, Ap, sh, threadIdx.x >> 5, kWarps);
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
  double bb, lsum, rz[2], pAp, rr, xs;
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
                                                         const T* in, T* out) {
  __shared__ Shared<T> sh;
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  matvec_w(d, g1, g2, tab, in, out, sh, int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5), warps);
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

// Solves one pair with the whole grid; fills `o` (status 1 converged, 0 not).
template <class T>
void solve_large_pair(const DevData& d, const BaseKernelView& kv, const DevGraph& g1, const DevGraph& g2, const T* tab,
                      const Options& opt, const Exec& exec, cudaStream_t st, int grid, DevOut& o) {
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
  large_matvec<T><<<grid, kThreads, 0, st>>>(d, g1, g2, tab, x, r);  // r0 = W x0 (diag x0 = b)
  TESSERA_CUDA_LAUNCH_CHECK();
  large_start<T><<<vgrid, kThreads, 0, st>>>(size, r, dg, p, sc);
  TESSERA_CUDA_LAUNCH_CHECK();
  LargeScalars h{};
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, st));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(st));
  const double bnorm = std::sqrt(h.bb);
  double res = bnorm > 0 ? std::sqrt(h.rr) / bnorm : 0.0;
  int it = 0, cur = 0;
  while (res > tol && it < opt.max_iter) {
    // zero pAp, rr and the rz slot this iteration writes
    TESSERA_CUDA_CHECK(cudaMemsetAsync(&sc->pAp, 0, 2 * sizeof(double), st));
    TESSERA_CUDA_CHECK(cudaMemsetAsync(&sc->rz[1 - cur], 0, sizeof(double), st));
    large_matvec<T><<<grid, kThreads, 0, st>>>(d, g1, g2, tab, p, Ap);
    TESSERA_CUDA_LAUNCH_CHECK();
    large_apply<T><<<vgrid, kThreads, 0, st>>>(size, p, dg, Ap, sc);
    TESSERA_CUDA_LAUNCH_CHECK();
    large_update<T><<<vgrid, kThreads, 0, st>>>(size, p, Ap, dg, x, r, cur, sc);
    TESSERA_CUDA_LAUNCH_CHECK();
    large_direction<T><<<vgrid, kThreads, 0, st>>>(size, r, dg, p, cur, sc);
    TESSERA_CUDA_LAUNCH_CHECK();
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(&h, sc, sizeof h, cudaMemcpyDeviceToHost, st));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(st));
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
  std::vector<float> weight, node_attr;
  std::vector<uint16_t> label;
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
    degree.insert(degree.end(), g->degree.begin(), g->degree.end());
    node_label.insert(node_label.end(), g->node_label.begin(), g->node_label.end());
    node_attr.insert(node_attr.end(), g->node_attr.begin(), g->node_attr.end());
  }
  nz_ptr.push_back(int32_t(weight.size()));  // unused sentinel
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
      s_deg(exec, bytes(degree)), s_nl(exec, bytes(node_label)), s_na(exec, bytes(node_attr)),
      s_tab(exec, bytes(tab)), s_jobs(exec, bytes(djobs)), s_out(exec, sizeof(DevOut) * std::max<size_t>(1, jobs.size())),
      s_counter(exec, sizeof(int));
  DevData d{upload(graphs, s_graphs, st), upload(row_ptr, s_row, st), upload(tile_col, s_col, st),
            upload(mask, s_mask, st), upload(nz_ptr, s_nz, st), upload(weight, s_w, st), upload(label, s_l, st),
            upload(degree, s_deg, st), upload(node_label, s_nl, st), upload(node_attr, s_na, st), attr_dim,
            in.table->size()};
  const T* dtab = upload(tab, s_tab, st);
  const PairJob* dj = upload(djobs, s_jobs, st);
  std::vector<DevOut> hout(jobs.size(), DevOut{0, 0, 0, -1});
  int sms = 0, per_sm = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, opt.device.index));
  TESSERA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mgk_pcg_kernel<T>, kThreads, 0));
  const int full_grid = std::max(1, sms * std::max(1, per_sm));
  const BaseKernelView kv = opt.node_kernel.view();
  for (size_t l = 0; l < large.size(); ++l) {
    const auto& j = djobs[large[l]];
    solve_large_pair<T>(d, kv, graphs[size_t(j.a)], graphs[size_t(j.b)], dtab, opt, exec, st, full_grid, hout[large[l]]);
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
    out[k].flops = double(hout[k].iterations + 1) *
                   (2.0 * double(a.tiles.nnz()) * double(b.tiles.nnz()) + 2.0 * double(a.tiles.blocks * b.tiles.blocks * 64));
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
