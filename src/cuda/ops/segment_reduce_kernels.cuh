#pragma once
// Device code of the degree-aware segment reduce (launchers in segment_reduce.cu).
//
// max/min state for 16/32-bit floats is ONE packed 64-bit word: an order-preserving 32-bit key of
// the value in the high half and the source index in the low half. Folding entries is then a plain
// integer max/min, which applies the tie rule (smallest j) and the NaN rule (NaN is the extreme)
// by construction, in registers, in shared memory and in global atomics alike:
//   max: word = key(v) << 32 | ~j, combined with max  -> largest key, then largest ~j = smallest j
//   min: word = key(v) << 32 |  j, combined with min  -> smallest key, then smallest j
//   key: -0.0 is canonicalized to +0.0 (IEEE equal values must tie), NaN gets 0xffffffff under max
//   and 0 under min; no other value reaches those two keys (they would be NaN bit patterns).
// f64 max/min keep (value, index) and compare with the same rule (light path only).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tessera::ops::cuda_sr {

enum Mode : int { kSum = 0, kMean = 1, kMax = 2, kMin = 3 };
constexpr int kWarp = 32;
constexpr int kVec = 4;                       // feature values per lane per tile
constexpr int kTileF = kWarp * kVec;          // feature columns per tile (128)

template <class T> struct AccT { using type = float; };
template <> struct AccT<double> { using type = double; };

__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }
__device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T from_acc(float v);
template <> __device__ __forceinline__ float from_acc<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_acc<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <class T> __device__ __forceinline__ T from_acc(double v);
template <> __device__ __forceinline__ double from_acc<double>(double v) { return v; }

__device__ __forceinline__ uint32_t order_key(float v) {
  if (v == 0.0f) v = 0.0f;  // -0.0 == +0.0: one key for both
  const uint32_t u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_value(uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
template <int MODE>
__device__ __forceinline__ unsigned long long pack(float v, int64_t j) {
  if constexpr (MODE == kMax) {
    const uint32_t k = isnan(v) ? 0xffffffffu : order_key(v);
    return (static_cast<unsigned long long>(k) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(j));
  } else {
    const uint32_t k = isnan(v) ? 0u : order_key(v);
    return (static_cast<unsigned long long>(k) << 32) | static_cast<uint32_t>(j);
  }
}
template <int MODE> constexpr unsigned long long kPackedInit = MODE == kMax ? 0ull : ~0ull;
template <int MODE>
__device__ __forceinline__ void unpack(unsigned long long w, float& v, int64_t& j) {
  const uint32_t k = static_cast<uint32_t>(w >> 32), lo = static_cast<uint32_t>(w);
  const bool nan = MODE == kMax ? k == 0xffffffffu : k == 0u;
  v = nan ? __uint_as_float(0x7fc00000u) : key_value(k);
  j = MODE == kMax ? int64_t(~lo) : int64_t(lo);
}
template <int MODE>
__device__ __forceinline__ unsigned long long combine(unsigned long long a, unsigned long long b) {
  return MODE == kMax ? (a > b ? a : b) : (a < b ? a : b);
}

// f64 max/min: the reference's rule, written for the device.
template <int MODE>
__device__ __forceinline__ bool beats(double v, int64_t j, double b, int64_t bj) {
  const bool vn = isnan(v), bn = isnan(b);
  if (vn || bn) return vn && (!bn || j < bj);
  if (v == b) return j < bj;
  return MODE == kMax ? v > b : v < b;
}

// Per-(node, feature) state of one reduction.
template <class T, int MODE>
struct State {
  static constexpr bool kArg = MODE >= kMax;
  static constexpr bool kPacked = kArg && !std::is_same_v<T, double>;
  using A = typename AccT<T>::type;
  A v;
  int64_t j;
  unsigned long long w;
  __device__ __forceinline__ void init() {
    v = A(0);
    j = -1;
    w = kPackedInit<MODE>;
  }
  __device__ __forceinline__ void add(T x, int64_t jj) {
    if constexpr (!kArg) {
      v += to_acc(x);
    } else if constexpr (kPacked) {
      w = combine<MODE>(w, pack<MODE>(to_acc(x), jj));
    } else {
      const double d = to_acc(x);
      if (j < 0 || beats<MODE>(d, jj, v, j)) {
        v = d;
        j = jj;
      }
    }
  }
  // Final value and arg of a row of `deg` entries (deg = 0: 0 and -1).
  __device__ __forceinline__ void finish(int64_t deg, T& out, int64_t& arg) const {
    if (deg == 0) {
      out = from_acc<T>(A(0));
      arg = -1;
      return;
    }
    if constexpr (!kArg) {
      out = from_acc<T>(MODE == kMean ? v / A(deg) : v);
      arg = -1;
    } else if constexpr (kPacked) {
      float f;
      unpack<MODE>(w, f, arg);
      out = from_acc<T>(f);
    } else {
      out = from_acc<T>(v);
      arg = j;
    }
  }
};

// LIGHT nodes: one warp per node, lanes over features (kVec strided columns per lane, so each load
// instruction of the warp covers 32 consecutive columns), the row's column ids fetched 32 at a time
// by the warp and broadcast with shuffles. nodes == nullptr: node = warp id (no split).
template <class T, class I, int MODE>
__global__ void light_kernel(const I* __restrict__ rowptr, const I* __restrict__ col,
                             const int64_t* __restrict__ nodes, int64_t count, const T* __restrict__ X,
                             int64_t ldx, T* __restrict__ Y, int64_t ldy, int64_t* __restrict__ arg, int64_t F) {
  const int lane = threadIdx.x % kWarp;
  const int64_t w = int64_t(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  if (w >= count) return;
  const int64_t i = nodes ? nodes[w] : w;
  const int64_t b = int64_t(rowptr[i]), e = int64_t(rowptr[i + 1]);
  for (int64_t f0 = 0; f0 < F; f0 += kTileF) {
    State<T, MODE> st[kVec];
#pragma unroll
    for (int v = 0; v < kVec; ++v) st[v].init();
    for (int64_t k0 = b; k0 < e; k0 += kWarp) {
      const int n = int(e - k0 < kWarp ? e - k0 : int64_t(kWarp));
      const int64_t mine = lane < n ? int64_t(col[k0 + lane]) : 0;
      for (int t = 0; t < n; ++t) {
        const int64_t j = __shfl_sync(0xffffffffu, mine, t);
        const T* x = X + j * ldx;
#pragma unroll
        for (int v = 0; v < kVec; ++v) {
          const int64_t f = f0 + lane + v * kWarp;
          if (f < F) st[v].add(x[f], j);
        }
      }
    }
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const int64_t f = f0 + lane + v * kWarp;
      if (f < F) {
        T out;
        int64_t a;
        st[v].finish(e - b, out, a);
        Y[i * ldy + f] = out;
        if (State<T, MODE>::kArg && arg) arg[i * F + f] = a;
      }
    }
  }
}

// One block of the HEAVY grid: a chunk [begin, end) of heavy row `h` (node = heavy[h]).
struct HeavyItem {
  int64_t h, begin, end;
};

// HEAVY nodes: block per (heavy node, edge chunk); the block's warps split the chunk's edges, fold
// into shared memory, and the block merges into buf[h, f] with one global atomic per feature.
// buf holds packed words (max/min) or accumulation-type partial sums (sum/mean).
template <class T, class I, int MODE>
__global__ void heavy_kernel(const I* __restrict__ col, const HeavyItem* __restrict__ items, const T* __restrict__ X,
                             int64_t ldx, void* buf, int64_t F) {
  using S = State<T, MODE>;
  using A = typename AccT<T>::type;
  static_assert(!S::kArg || S::kPacked, "heavy path needs the packed key");
  __shared__ unsigned long long sh_w[kTileF];
  __shared__ A sh_a[kTileF];
  const HeavyItem it = items[blockIdx.x];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  for (int64_t f0 = 0; f0 < F; f0 += kTileF) {
    for (int t = threadIdx.x; t < kTileF; t += blockDim.x) {
      sh_w[t] = kPackedInit<MODE>;
      sh_a[t] = A(0);
    }
    __syncthreads();
    S st[kVec];
#pragma unroll
    for (int v = 0; v < kVec; ++v) st[v].init();
    for (int64_t k = it.begin + warp; k < it.end; k += warps) {
      const int64_t j = int64_t(col[k]);
      const T* x = X + j * ldx;
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const int64_t f = f0 + lane + v * kWarp;
        if (f < F) st[v].add(x[f], j);
      }
    }
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const int t = lane + v * kWarp;
      if constexpr (S::kArg) {
        if (MODE == kMax) atomicMax(&sh_w[t], st[v].w); else atomicMin(&sh_w[t], st[v].w);
      } else {
        atomicAdd(&sh_a[t], st[v].v);
      }
    }
    __syncthreads();
    for (int t = threadIdx.x; t < kTileF; t += blockDim.x) {
      const int64_t f = f0 + t;
      if (f >= F) continue;
      if constexpr (S::kArg) {
        auto* g = static_cast<unsigned long long*>(buf) + it.h * F + f;
        if (MODE == kMax) atomicMax(g, sh_w[t]); else atomicMin(g, sh_w[t]);
      } else {
        atomicAdd(static_cast<A*>(buf) + it.h * F + f, sh_a[t]);
      }
    }
    __syncthreads();
  }
}

// Coalesced unpack of the heavy buffer into Y and arg (thread per (heavy node, feature)).
template <class T, class I, int MODE>
__global__ void unpack_kernel(const I* __restrict__ rowptr, const int64_t* __restrict__ heavy, int64_t count,
                              const void* buf, T* __restrict__ Y, int64_t ldy, int64_t* __restrict__ arg, int64_t F) {
  using S = State<T, MODE>;
  using A = typename AccT<T>::type;
  const int64_t total = count * F;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = idx / F, f = idx % F, i = heavy[h];
    const int64_t deg = int64_t(rowptr[i + 1]) - int64_t(rowptr[i]);
    S st;
    st.init();
    if constexpr (S::kArg) st.w = static_cast<const unsigned long long*>(buf)[idx];
    else st.v = static_cast<const A*>(buf)[idx];
    T out;
    int64_t a;
    st.finish(deg, out, a);
    Y[i * ldy + f] = out;
    if (S::kArg && arg) arg[i * F + f] = a;
  }
}

// Column ids in range, checked once per graph id: sets *bad to 1 + the first bad entry seen.
template <class I>
__global__ void check_columns_kernel(const I* __restrict__ col, int64_t nnz, int64_t cols,
                                     unsigned long long* bad) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = int64_t(col[k]);
    if (c < 0 || c >= cols) atomicMin(bad, static_cast<unsigned long long>(k) + 1ull);
  }
}

// ---- backward -------------------------------------------------------------------------------
// max/min: dX[arg, f] += dY[i, f] (thread per (i, f)); acc has leading dimension ldacc.
template <class T, class A>
__global__ void scatter_arg_kernel(const int64_t* __restrict__ arg, const T* __restrict__ dY, int64_t ldy,
                                   int64_t rows, int64_t F, A* acc, int64_t ldacc) {
  const int64_t total = rows * F;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / F, f = idx % F;
    const int64_t j = arg[idx];
    if (j >= 0) atomicAdd(acc + j * ldacc + f, A(to_acc(dY[i * ldy + f])));
  }
}

// sum/mean: warp per row i, dY[i] (scaled by 1/deg for mean) added to every source j of the row.
template <class T, class I, class A, bool MEAN>
__global__ void scatter_rows_kernel(const I* __restrict__ rowptr, const I* __restrict__ col, int64_t rows,
                                    const T* __restrict__ dY, int64_t ldy, int64_t F, A* acc, int64_t ldacc) {
  const int lane = threadIdx.x % kWarp;
  const int64_t i = int64_t(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  if (i >= rows) return;
  const int64_t b = int64_t(rowptr[i]), e = int64_t(rowptr[i + 1]);
  if (b == e) return;
  const A s = MEAN ? A(1) / A(e - b) : A(1);
  for (int64_t f0 = 0; f0 < F; f0 += kTileF) {
    A d[kVec];
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const int64_t f = f0 + lane + v * kWarp;
      d[v] = f < F ? A(to_acc(dY[i * ldy + f])) * s : A(0);
    }
    for (int64_t k = b; k < e; ++k) {
      const int64_t j = int64_t(col[k]);
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const int64_t f = f0 + lane + v * kWarp;
        if (f < F) atomicAdd(acc + j * ldacc + f, d[v]);
      }
    }
  }
}

template <class T, class A>
__global__ void convert_kernel(const A* __restrict__ acc, int64_t rows, int64_t F, T* __restrict__ out, int64_t ld) {
  const int64_t total = rows * F;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x)
    out[(idx / F) * ld + idx % F] = from_acc<T>(acc[idx]);
}

}  // namespace tessera::ops::cuda_sr
