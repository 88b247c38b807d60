// Kernels of the locality study (see locality.hpp). Both mappings perform, per (node, feature),
// the same float additions over the node's neighbours; only the lane -> (neighbour, feature)
// assignment and the load width differ. Eight warps per 256-thread block, one node per warp.
#include "cuda/study/locality.hpp"

#include "tessera/core/cuda_check.hpp"

namespace tessera::cuda::study {
namespace {
constexpr int kWarpsPerBlock = 8;

template <int W>
struct Vec;
template <>
struct Vec<1> {
  using T = float;
  __device__ static void add(float* acc, T v) { acc[0] += v; }
  __device__ static T make(const float* a) { return a[0]; }
};
template <>
struct Vec<4> {
  using T = float4;
  __device__ static void add(float* acc, T v) {
    acc[0] += v.x;
    acc[1] += v.y;
    acc[2] += v.z;
    acc[3] += v.w;
  }
  __device__ static T make(const float* a) { return make_float4(a[0], a[1], a[2], a[3]); }
};

// Lanes along features: lane owns W consecutive features of each 32*W-wide chunk; the warp walks
// the neighbour list in sequence (the column index is a broadcast load).
template <int W>
__global__ void feature_parallel(int64_t rows, const int32_t* __restrict__ rowptr, const int32_t* __restrict__ col,
                                 const float* __restrict__ X, float* __restrict__ Y, int64_t F) {
  using V = Vec<W>;
  const int lane = threadIdx.x & 31;
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= rows) return;
  const int32_t k0 = rowptr[row], k1 = rowptr[row + 1];
  for (int64_t f = int64_t(lane) * W; f < F; f += 32 * W) {
    float acc[W] = {};
#pragma unroll 4
    for (int32_t k = k0; k < k1; ++k) {
      const int64_t j = col[k];
      V::add(acc, *reinterpret_cast<const typename V::T*>(X + j * F + f));
    }
    *reinterpret_cast<typename V::T*>(Y + row * F + f) = V::make(acc);
  }
}

// Lanes along neighbours: lane l sums the rows col[k0 + l], col[k0 + l + 32], ... over an 8-wide
// feature tile (8 scalar or 2 float4 loads), then the 32 partial sums are reduced by xor shuffles.
template <int W>
__global__ void neighbour_parallel(int64_t rows, const int32_t* __restrict__ rowptr, const int32_t* __restrict__ col,
                                   const float* __restrict__ X, float* __restrict__ Y, int64_t F) {
  using V = Vec<W>;
  constexpr int T = int(kNeighbourTile);
  const int lane = threadIdx.x & 31;
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= rows) return;
  const int32_t k0 = rowptr[row], k1 = rowptr[row + 1];
  for (int64_t f = 0; f < F; f += T) {
    float acc[T] = {};
    for (int32_t k = k0 + lane; k < k1; k += 32) {
      const float* src = X + int64_t(col[k]) * F + f;
#pragma unroll
      for (int v = 0; v < T; v += W) V::add(acc + v, *reinterpret_cast<const typename V::T*>(src + v));
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
      for (int v = 0; v < T; ++v) acc[v] += __shfl_xor_sync(0xffffffffu, acc[v], off);
    if (lane == 0) {
#pragma unroll
      for (int v = 0; v < T; v += W) *reinterpret_cast<typename V::T*>(Y + row * F + f + v) = V::make(acc + v);
    }
  }
}
}  // namespace

bool supports(int64_t F, Mapping m, Load l) {
  if (F < 1) return false;
  if (l == Load::vec16 && F % 4 != 0) return false;
  return m == Mapping::feature_parallel || F % kNeighbourTile == 0;
}

void aggregate_sum(const CsrView<int32_t>& A, const float* X, float* Y, int64_t F, Mapping m, Load l,
                   const Exec& exec) {
  TESSERA_CHECK(exec.device.is_cuda() && A.device.is_cuda(), "study::aggregate_sum: graph and exec must be on a CUDA device (A on ",
                A.device.str(), ", exec on ", exec.device.str(), ")");
  TESSERA_CHECK(supports(F, m, l), "study::aggregate_sum: width ", F, " is not supported by the ", mapping_name(m),
                " mapping with ", load_name(l), " loads (vec16 needs F % 4 == 0, neighbour F % 8 == 0)");
  TESSERA_CHECK(l == Load::scalar || (reinterpret_cast<uintptr_t>(X) % 16 == 0 && reinterpret_cast<uintptr_t>(Y) % 16 == 0),
                "study::aggregate_sum: vec16 loads need 16-byte aligned X and Y");
  if (A.rows == 0) return;
  TESSERA_CUDA_CHECK(cudaSetDevice(exec.device.index));
  const cudaStream_t s = cuda_stream(exec.stream);
  const dim3 grid(unsigned((A.rows + kWarpsPerBlock - 1) / kWarpsPerBlock)), block(32 * kWarpsPerBlock);
  if (m == Mapping::feature_parallel) {
    if (l == Load::scalar)
      feature_parallel<1><<<grid, block, 0, s>>>(A.rows, A.rowptr, A.col, X, Y, F);
    else
      feature_parallel<4><<<grid, block, 0, s>>>(A.rows, A.rowptr, A.col, X, Y, F);
  } else {
    if (l == Load::scalar)
      neighbour_parallel<1><<<grid, block, 0, s>>>(A.rows, A.rowptr, A.col, X, Y, F);
    else
      neighbour_parallel<4><<<grid, block, 0, s>>>(A.rows, A.rowptr, A.col, X, Y, F);
  }
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace tessera::cuda::study
