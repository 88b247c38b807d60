// Launchers of the custom CSR SpMM / SDDMM kernels (device code in spmm_kernels.cuh). Every launch
// runs on the caller's stream and is checked.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda/ops/spmm_kernels.cuh"
#include "ops/spmm/variants.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::ops::cuda {

namespace {
constexpr int kBlock = 256;

// Runs fn with T bound to the device element type of dtype.
template <class Fn>
void dispatch_device_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::f16: return fn(__half{});
    case DType::bf16: return fn(__nv_bfloat16{});
  }
  fail("spmm (cuda): unsupported dtype");
}

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

template <class T, class I, int V, int NV, int G>
void launch(const SpmmArgs<I>& a, const Exec& exec) {
  using W = kernels::Acc<T>;
  const int64_t threads = a.A.rows * G;
  const int64_t blocks = (threads + kBlock - 1) / kBlock;
  TESSERA_CHECK(blocks <= INT32_MAX, "spmm (cuda): too many rows (", a.A.rows, ")");
  if (blocks == 0) return;
  kernels::csr_rows_kernel<T, I, V, NV, G><<<unsigned(blocks), kBlock, 0, cuda_stream(exec.stream)>>>(
      a.A.rows, a.X.cols, a.A.rowptr, a.A.col, static_cast<const W*>(a.values), a.A.values,
      static_cast<const T*>(a.X.data), a.X.ld, static_cast<T*>(a.Y.data), a.Y.ld);
  TESSERA_CUDA_LAUNCH_CHECK();
}

// Picks NV (vectors per lane) in {1, 2, 4} for a tile of G lanes over `vectors` vectors.
template <class T, class I, int V, int G>
void launch_nv(const SpmmArgs<I>& a, const Exec& exec, int64_t vectors) {
  const int64_t per_lane = (vectors + G - 1) / G;
  if (per_lane <= 1) return launch<T, I, V, 1, G>(a, exec);
  if (per_lane <= 2) return launch<T, I, V, 2, G>(a, exec);
  return launch<T, I, V, 4, G>(a, exec);  // wider rows loop over feature tiles
}

template <class T, class I>
void warp_row_typed(const SpmmArgs<I>& a, const Exec& exec) {
  constexpr int V = kernels::kVec16<T>;
  const int64_t F = a.X.cols;
  const bool vec = F % V == 0 && a.X.ld % V == 0 && a.Y.ld % V == 0 && aligned16(a.X.data) &&
                   aligned16(a.Y.data);
  if (!vec) return launch_nv<T, I, 1, 32>(a, exec, F);  // generic: scalar loads, a warp per row
  const int64_t vectors = F / V;
  const int64_t g = std::clamp<int64_t>(next_pow2(vectors), 8, 32);
  if (g == 8) return launch_nv<T, I, V, 8>(a, exec, vectors);
  if (g == 16) return launch_nv<T, I, V, 16>(a, exec, vectors);
  return launch_nv<T, I, V, 32>(a, exec, vectors);
}

template <class T, class I>
void feature_parallel_typed(const SpmmArgs<I>& a, const Exec& exec) {
  const int64_t F = a.X.cols;
  TESSERA_CHECK(F <= kFeatureParallelMaxWidth, "spmm: cuda.csr.feature_parallel needs width <= ",
                kFeatureParallelMaxWidth, ", got ", F);
  switch (next_pow2(F)) {
    case 1: return launch<T, I, 1, 1, 1>(a, exec);
    case 2: return launch<T, I, 1, 1, 2>(a, exec);
    case 4: return launch<T, I, 1, 1, 4>(a, exec);
    case 8: return launch<T, I, 1, 1, 8>(a, exec);
    case 16: return launch<T, I, 1, 1, 16>(a, exec);
    default: return launch<T, I, 1, 1, 32>(a, exec);
  }
}

template <class T, class I>
void sddmm_typed(const SddmmArgs<I>& a, const Exec& exec) {
  using W = kernels::Acc<T>;
  constexpr int V = kernels::kVec16<T>;
  const int64_t F = a.X.cols;
  const int64_t blocks = (a.A.rows * 32 + kBlock - 1) / kBlock;
  TESSERA_CHECK(blocks <= INT32_MAX, "sddmm (cuda): too many rows (", a.A.rows, ")");
  if (blocks == 0) return;
  const bool vec = F % V == 0 && a.X.ld % V == 0 && a.dY.ld % V == 0 && aligned16(a.X.data) &&
                   aligned16(a.dY.data);
  auto* dw = static_cast<W*>(a.dw);
  const auto* dY = static_cast<const T*>(a.dY.data);
  const auto* X = static_cast<const T*>(a.X.data);
  if (vec)
    kernels::sddmm_rows_kernel<T, I, V><<<unsigned(blocks), kBlock, 0, cuda_stream(exec.stream)>>>(
        a.A.rows, F, a.A.rowptr, a.A.col, dY, a.dY.ld, X, a.X.ld, dw);
  else
    kernels::sddmm_rows_kernel<T, I, 1><<<unsigned(blocks), kBlock, 0, cuda_stream(exec.stream)>>>(
        a.A.rows, F, a.A.rowptr, a.A.col, dY, a.dY.ld, X, a.X.ld, dw);
  TESSERA_CUDA_LAUNCH_CHECK();
}
}  // namespace

template <class I>
void spmm_warp_row(const SpmmArgs<I>& a, const Exec& exec) {
  dispatch_device_type(a.X.dtype, [&](auto t) { warp_row_typed<decltype(t), I>(a, exec); });
}
template <class I>
void spmm_feature_parallel(const SpmmArgs<I>& a, const Exec& exec) {
  dispatch_device_type(a.X.dtype, [&](auto t) { feature_parallel_typed<decltype(t), I>(a, exec); });
}
template <class I>
void sddmm(const SddmmArgs<I>& a, const Exec& exec) {
  dispatch_device_type(a.X.dtype, [&](auto t) { sddmm_typed<decltype(t), I>(a, exec); });
}

template <class I>
int64_t max_row_length(const CsrView<I>& g, const Exec& exec) {
  if (g.rows == 0) return 0;
  std::vector<I> host(size_t(g.rows) + 1);
  cudaStream_t s = cuda_stream(exec.stream);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(host.data(), g.rowptr, host.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  int64_t m = 0;
  for (int64_t i = 0; i < g.rows; ++i) m = std::max<int64_t>(m, int64_t(host[size_t(i) + 1] - host[size_t(i)]));
  return m;
}

template void spmm_warp_row<int32_t>(const SpmmArgs<int32_t>&, const Exec&);
template void spmm_warp_row<int64_t>(const SpmmArgs<int64_t>&, const Exec&);
template void spmm_feature_parallel<int32_t>(const SpmmArgs<int32_t>&, const Exec&);
template void spmm_feature_parallel<int64_t>(const SpmmArgs<int64_t>&, const Exec&);
template void sddmm<int32_t>(const SddmmArgs<int32_t>&, const Exec&);
template void sddmm<int64_t>(const SddmmArgs<int64_t>&, const Exec&);
template int64_t max_row_length<int32_t>(const CsrView<int32_t>&, const Exec&);
template int64_t max_row_length<int64_t>(const CsrView<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda
