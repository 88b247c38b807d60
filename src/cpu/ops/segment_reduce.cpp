// CPU segment reduce: OpenMP over rows (dynamic schedule, because degrees are skewed), and within a
// row a register/L1 tile of feature columns that the compiler vectorizes; the tie and NaN rules are
// written branch-free so the max/min loop vectorizes too. Each gather prefetches the row of the
// entry kGatherAhead positions on (prefetch.hpp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <cstdlib>
#include <type_traits>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "ops/segment_reduce/backends.hpp"
#include "prefetch.hpp"
#include "simd.hpp"

namespace tessera::ops::detail {
namespace {

using cpu::kGatherAhead;
using cpu::prefetch_row;

constexpr int64_t kTile = 128;  // feature columns per tile: 128 accumulators + args fit in L1; one
                                // pass over a row's edges at the common widths (<= 128)

template <class T> struct Acc { using type = float; };
template <> struct Acc<double> { using type = double; };

template <class T> inline typename Acc<T>::type to_acc(T v) { return static_cast<float>(v); }
template <> inline double to_acc<double>(double v) { return v; }
template <> inline float to_acc<float>(float v) { return v; }
template <class T, class A> inline T from_acc(A v) { return T(float(v)); }
template <> inline double from_acc<double, double>(double v) { return v; }
template <> inline float from_acc<float, float>(float v) { return v; }

int threads_of(const Exec& exec) { return exec.threads > 0 ? exec.threads : omp_get_max_threads(); }

// Folds entries cols[0..m) into acc/arg32 under the tie/NaN rule (a NaN beats any number, else the
// better value wins, and among equals or NaNs the smallest source index). max or min is a template
// parameter so the select loop has no runtime branch; all masks are 32-bit so it vectorizes.
template <bool kMax, class T, class A, class I>
inline void fold_narrow(const T* X, int64_t ldx, int64_t f0, int64_t n, const I* cols, int64_t m,
                        A* __restrict acc, int32_t* __restrict arg32) {
  // __restrict: without it GCC versions the loop on an acc/X overlap check and ran the scalar copy.
  for (int64_t k = 0; k < m; ++k) {
    if (k + kGatherAhead < m) prefetch_row(X + int64_t(cols[k + kGatherAhead]) * ldx + f0, n * int64_t(sizeof(T)));
    const int32_t j = int32_t(cols[k]);
    const T* __restrict x = X + int64_t(j) * ldx + f0;
#pragma omp simd
    for (int64_t t = 0; t < n; ++t) {
      const A v = to_acc<T>(x[t]);
      const A c = acc[t];
      const bool vn = v != v, cn = c != c, lower = j < arg32[t];
      const bool better = kMax ? v > c : v < c;
      const bool take = (vn & (!cn | lower)) | (better | ((v == c) & lower));
      acc[t] = take ? v : c;
      arg32[t] = take ? j : arg32[t];
    }
  }
}

// fp32 specialisation with GCC vector types: the auto-vectorised loop above stayed scalar in the
// hot path (the per-lane select with mixed masks), and max/min ran ~5x slower than sum. The same
// rule as bit masks on W fp32 + W int32 lanes. The portable build targets baseline x86-64 (SSE2,
// W = 4); wider copies are compiled for AVX2 (W = 8) and AVX-512 (W = 16) and picked at run time.
// One W-lane step of the rule on features [t, t + W): compare, select value and index.
template <bool kMax, int W>
__attribute__((always_inline)) inline void fold_step(const float* x, float* acc, int32_t* arg32, int32_t j) {
  typedef float vf __attribute__((vector_size(4 * W)));
  typedef int32_t vi __attribute__((vector_size(4 * W)));
  const vi jv = vi{} + j;
  vf v, c;
  vi a;
  std::memcpy(&v, x, sizeof v);
  std::memcpy(&c, acc, sizeof c);
  std::memcpy(&a, arg32, sizeof a);
  const vi vn = v != v, cn = c != c, lower = jv < a;
  const vi better = kMax ? (v > c) : (v < c);
  const vi take = (vn & (~cn | lower)) | better | ((v == c) & lower);
  c = (vf)(((vi)v & take) | ((vi)c & ~take));
  a = (jv & take) | (a & ~take);
  std::memcpy(acc, &c, sizeof c);
  std::memcpy(arg32, &a, sizeof a);
}

// W-lane steps, then 4-lane steps for the rest of the multiple of 4, then scalars.
template <bool kMax, int W, class I>
__attribute__((always_inline)) inline void fold_f32_lanes(const float* X, int64_t ldx, int64_t f0, int64_t n,
                                                          const I* cols, int64_t m, float* acc, int32_t* arg32) {
  const int64_t nw = n - n % W, n4 = std::max(nw, n & ~int64_t(3));
  for (int64_t k = 0; k < m; ++k) {
    if (k + kGatherAhead < m) prefetch_row(X + int64_t(cols[k + kGatherAhead]) * ldx + f0, n * int64_t(sizeof(float)));
    const int32_t j = int32_t(cols[k]);
    const float* x = X + int64_t(j) * ldx + f0;
    for (int64_t t = 0; t < nw; t += W) fold_step<kMax, W>(x + t, acc + t, arg32 + t, j);
    for (int64_t t = nw; t < n4; t += 4) fold_step<kMax, 4>(x + t, acc + t, arg32 + t, j);
    for (int64_t t = n4; t < n; ++t) {
      const float v = x[t], c = acc[t];
      const bool vn = v != v, cn = c != c, lower = j < arg32[t];
      const bool take = (vn && (!cn || lower)) || (kMax ? v > c : v < c) || (v == c && lower);
      if (take) {
        acc[t] = v;
        arg32[t] = j;
      }
    }
  }
}

template <bool kMax, class I>
__attribute__((target("avx512f"))) void fold_f32_avx512(const float* X, int64_t ldx, int64_t f0, int64_t n,
                                                        const I* cols, int64_t m, float* acc, int32_t* arg32) {
  fold_f32_lanes<kMax, 16>(X, ldx, f0, n, cols, m, acc, arg32);
}
template <bool kMax, class I>
__attribute__((target("avx2"))) void fold_f32_avx2(const float* X, int64_t ldx, int64_t f0, int64_t n,
                                                   const I* cols, int64_t m, float* acc, int32_t* arg32) {
  fold_f32_lanes<kMax, 8>(X, ldx, f0, n, cols, m, acc, arg32);
}

using cpu::simd_level;  // simd.hpp: the widest copy this CPU runs, TESSERA_CPU_SIMD caps it

template <bool kMax, class I>
inline void fold_narrow_f32(const float* X, int64_t ldx, int64_t f0, int64_t n, const I* cols, int64_t m,
                            float* acc, int32_t* arg32) {
  switch (simd_level()) {
    case 2: return fold_f32_avx512<kMax>(X, ldx, f0, n, cols, m, acc, arg32);
    case 1: return fold_f32_avx2<kMax>(X, ldx, f0, n, cols, m, acc, arg32);
    default: return fold_f32_lanes<kMax, 4>(X, ldx, f0, n, cols, m, acc, arg32);
  }
}

template <bool kMax, class T, class A, class I>
inline void fold_narrow_any(const T* X, int64_t ldx, int64_t f0, int64_t n, const I* cols, int64_t m, A* acc,
                            int32_t* arg32) {
  if constexpr (std::is_same_v<T, float>)
    fold_narrow_f32<kMax>(X, ldx, f0, n, cols, m, acc, arg32);
  else
    fold_narrow<kMax, T>(X, ldx, f0, n, cols, m, acc, arg32);
}

template <class T, class I>
void forward(const SegmentReduceArgs<I>& a, const Exec& exec) {
  using A = typename Acc<T>::type;
  const auto& g = a.A;
  const int64_t F = a.X.cols, ldx = a.X.ld, ldy = a.Y.ld;
  const T* X = static_cast<const T*>(a.X.data);
  T* Y = static_cast<T*>(a.Y.data);
  const Reduce red = a.reduce;
  const bool is_max = red == Reduce::max;
  const bool narrow = g.cols <= int64_t(INT32_MAX);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_of(exec))
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t b = int64_t(g.rowptr[i]), e = int64_t(g.rowptr[i + 1]);
    A acc[kTile];
    int64_t arg[kTile];
    int32_t arg32[kTile];
    for (int64_t f0 = 0; f0 < F; f0 += kTile) {
      const int64_t n = std::min(kTile, F - f0);
      if (b == e) {  // empty row: 0 and arg -1
        for (int64_t t = 0; t < n; ++t) Y[i * ldy + f0 + t] = from_acc<T, A>(A(0));
        if (a.arg && has_arg(red))
          for (int64_t t = 0; t < n; ++t) a.arg[i * F + f0 + t] = -1;
        continue;
      }
      if (!has_arg(red)) {
        for (int64_t t = 0; t < n; ++t) acc[t] = 0;
        for (int64_t k = b; k < e; ++k) {
          if (k + kGatherAhead < e) prefetch_row(X + int64_t(g.col[k + kGatherAhead]) * ldx + f0, n * int64_t(sizeof(T)));
          const T* x = X + int64_t(g.col[k]) * ldx + f0;
#pragma omp simd
          for (int64_t t = 0; t < n; ++t) acc[t] += to_acc<T>(x[t]);
        }
        const A scale = red == Reduce::mean ? A(1) / A(e - b) : A(1);
        for (int64_t t = 0; t < n; ++t)
          Y[i * ldy + f0 + t] = from_acc<T, A>(red == Reduce::mean ? acc[t] * scale : acc[t]);
        continue;
      }
      if (narrow) {
        // Fast path (every source index fits in 32 bits): the winner's source index is tracked in
        // an int32 lane, the same width as the float accumulator, so compare + select (including the
        // tie rule's index compare) vectorizes even on baseline SSE2, which has no 64-bit compares.
        // Works for rows in any order; indices widen to int64 once per row.
        const int32_t j0 = int32_t(g.col[b]);
        const T* x0 = X + int64_t(j0) * ldx + f0;
        for (int64_t t = 0; t < n; ++t) {
          acc[t] = to_acc<T>(x0[t]);
          arg32[t] = j0;
        }
        if (is_max)
          fold_narrow_any<true, T>(X, ldx, f0, n, g.col + b + 1, e - b - 1, acc, arg32);
        else
          fold_narrow_any<false, T>(X, ldx, f0, n, g.col + b + 1, e - b - 1, acc, arg32);
        for (int64_t t = 0; t < n; ++t) arg[t] = arg32[t];
      } else {  // 64-bit source indices: the same rule on int64 lanes.
        {
          const int64_t j0 = int64_t(g.col[b]);
          const T* x = X + j0 * ldx + f0;
          for (int64_t t = 0; t < n; ++t) {
            acc[t] = to_acc<T>(x[t]);
            arg[t] = j0;
          }
        }
        for (int64_t k = b + 1; k < e; ++k) {
          if (k + kGatherAhead < e) prefetch_row(X + int64_t(g.col[k + kGatherAhead]) * ldx + f0, n * int64_t(sizeof(T)));
          const int64_t j = int64_t(g.col[k]);
          const T* x = X + j * ldx + f0;
#pragma omp simd
          for (int64_t t = 0; t < n; ++t) {
            const A v = to_acc<T>(x[t]);
            const A c = acc[t];
            const bool vn = v != v, cn = c != c;
            const bool better = is_max ? v > c : v < c;
            const bool take = (vn & (!cn | (j < arg[t]))) | (!vn & !cn & (better | ((v == c) & (j < arg[t]))));
            acc[t] = take ? v : c;
            arg[t] = take ? j : arg[t];
          }
        }
      }
      for (int64_t t = 0; t < n; ++t) Y[i * ldy + f0 + t] = from_acc<T, A>(acc[t]);
      if (a.arg)
        for (int64_t t = 0; t < n; ++t) a.arg[i * F + f0 + t] = arg[t];
    }
  }
}

// The transpose of the forward graph (out-neighbour lists: for source j, the targets i), built
// once per graph id so the sum/mean backward is a gather, race-free and deterministic.
struct Transposed {
  std::vector<int64_t> ptr, tgt;
};
template <class I>
std::shared_ptr<const Transposed> build_transpose(const CsrView<I>& g) {
  auto t = std::make_shared<Transposed>();
  t->ptr.assign(size_t(g.cols) + 1, 0);
  t->tgt.resize(size_t(g.nnz));
  for (int64_t k = 0; k < g.nnz; ++k) ++t->ptr[size_t(g.col[k]) + 1];
  for (int64_t j = 0; j < g.cols; ++j) t->ptr[j + 1] += t->ptr[j];
  std::vector<int64_t> fill(t->ptr.begin(), t->ptr.end() - 1);
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t k = int64_t(g.rowptr[i]); k < int64_t(g.rowptr[i + 1]); ++k)
      t->tgt[size_t(fill[size_t(g.col[k])]++)] = i;
  return t;
}
template <class I>
std::shared_ptr<const Transposed> cached_transpose(const CsrView<I>& g) {
  if (g.id == 0) return build_transpose(g);  // anonymous graph: no cache
  static std::mutex mu;
  static std::list<std::pair<uint64_t, std::shared_ptr<const Transposed>>> lru;  // small: 8 graphs
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = lru.begin(); it != lru.end(); ++it)
    if (it->first == g.id) {
      lru.splice(lru.begin(), lru, it);
      return lru.front().second;
    }
  auto t = build_transpose(g);
  lru.emplace_front(g.id, t);
  if (lru.size() > 8) lru.pop_back();
  return t;
}

template <class T, class I>
void backward(const SegmentReduceBackwardArgs<I>& a, const Exec& exec) {
  using A = typename Acc<T>::type;
  const auto& g = a.A;
  const int64_t F = a.dY.cols, ldy = a.dY.ld, ldx = a.dX.ld;
  const T* dY = static_cast<const T*>(a.dY.data);
  T* dX = static_cast<T*>(a.dX.data);
  if (has_arg(a.reduce)) {
    // Scatter at the saved arg. Each thread owns a band of feature columns of dX, so no two
    // threads touch the same element and no atomics are needed; accumulation in A per band.
    const int64_t band = 16, nb = (F + band - 1) / band;
#pragma omp parallel num_threads(threads_of(exec))
    {
      std::vector<A> acc;
#pragma omp for schedule(dynamic, 1)
      for (int64_t bi = 0; bi < nb; ++bi) {
        const int64_t f0 = bi * band, n = std::min(band, F - f0);
        acc.assign(size_t(g.cols) * size_t(n), A(0));
        for (int64_t i = 0; i < g.rows; ++i)
          for (int64_t t = 0; t < n; ++t) {
            const int64_t j = a.arg[i * F + f0 + t];
            if (j >= 0) acc[size_t(j) * n + t] += to_acc<T>(dY[i * ldy + f0 + t]);
          }
        for (int64_t j = 0; j < g.cols; ++j)
          for (int64_t t = 0; t < n; ++t) dX[j * ldx + f0 + t] = from_acc<T, A>(acc[size_t(j) * n + t]);
      }
    }
    return;
  }
  const auto tr = cached_transpose(g);
  const bool mean = a.reduce == Reduce::mean;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_of(exec))
  for (int64_t j = 0; j < g.cols; ++j) {
    A acc[kTile];
    for (int64_t f0 = 0; f0 < F; f0 += kTile) {
      const int64_t n = std::min(kTile, F - f0);
      for (int64_t t = 0; t < n; ++t) acc[t] = 0;
      for (int64_t p = tr->ptr[j]; p < tr->ptr[j + 1]; ++p) {
        const int64_t i = tr->tgt[size_t(p)];
        const A s = mean ? A(1) / A(int64_t(g.rowptr[i + 1]) - int64_t(g.rowptr[i])) : A(1);
        const T* d = dY + i * ldy + f0;
#pragma omp simd
        for (int64_t t = 0; t < n; ++t) acc[t] += to_acc<T>(d[t]) * s;
      }
      for (int64_t t = 0; t < n; ++t) dX[j * ldx + f0 + t] = from_acc<T, A>(acc[t]);
    }
  }
}

}  // namespace

template <class I> void segment_reduce_cpu(const SegmentReduceArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, T, [&] { forward<T, I>(a, exec); });
}
template <class I> void segment_reduce_backward_cpu(const SegmentReduceBackwardArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.dY.dtype, T, [&] { backward<T, I>(a, exec); });
}

template void segment_reduce_cpu<int32_t>(const SegmentReduceArgs<int32_t>&, const Exec&);
template void segment_reduce_cpu<int64_t>(const SegmentReduceArgs<int64_t>&, const Exec&);
template void segment_reduce_backward_cpu<int32_t>(const SegmentReduceBackwardArgs<int32_t>&, const Exec&);
template void segment_reduce_backward_cpu<int64_t>(const SegmentReduceBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::detail
