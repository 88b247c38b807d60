// Fused attention on CUDA: entry points, the transpose build (stable: cub radix sort of the
// edge positions by source) and the f32 / f64 instantiations without edge features (f16 / bf16:
// attention_half.cu; with edge features, every dtype: attention_edge.cu).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops {
namespace cuda_attention {
// Defined in attention_half.cu.
template <class I> void forward_half(const AttentionArgs<I>& a, const Exec& exec);
template <class I> void backward_half(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path);
// Defined in attention_edge.cu.
template <class I> void forward_edge(const AttentionArgs<I>& a, const Exec& exec);
template <class I> void backward_edge(const AttentionBackwardArgs<I>& b, const Exec& exec);
}  // namespace cuda_attention

namespace detail {

template <class I>
void build_attention_transpose_cuda(const CsrView<I>& A, I* colptr, I* row, I* perm, const Exec& exec) {
  using namespace cuda_attention;
  const cudaStream_t s = cuda_stream(exec.stream);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(colptr, 0, sizeof(I) * size_t(A.cols + 1), s));
  if (A.nnz == 0) return;
  const int blocks = int(std::min<int64_t>((A.nnz + 255) / 256, int64_t(cuda_multiprocessors()) * 8));
  count_sources_kernel<I><<<blocks, 256, 0, s>>>(A.col, A.nnz, colptr + 1);
  TESSERA_CUDA_LAUNCH_CHECK();
  size_t scan_bytes = 0, sort_bytes = 0;
  TESSERA_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, colptr + 1, colptr + 1, A.cols, s));
  TESSERA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, A.col, static_cast<I*>(nullptr),
                                                     static_cast<const I*>(nullptr), perm, A.nnz, 0,
                                                     int(sizeof(I) * 8), s));
  // keys out (nnz), positions in (nnz), cub's temporary storage
  const size_t keys_bytes = sizeof(I) * size_t(A.nnz);
  Scratch mem(exec, 2 * keys_bytes + std::max(scan_bytes, sort_bytes) + 256);
  I* keys_out = mem.as<I>();
  I* positions = keys_out + A.nnz;
  void* temp = reinterpret_cast<char*>(mem.get()) + (2 * keys_bytes + 255) / 256 * 256;
  TESSERA_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp, scan_bytes, colptr + 1, colptr + 1, A.cols, s));
  iota_kernel<I><<<blocks, 256, 0, s>>>(positions, A.nnz);
  TESSERA_CUDA_LAUNCH_CHECK();
  TESSERA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, sort_bytes, A.col, keys_out, positions, perm,
                                                     A.nnz, 0, int(sizeof(I) * 8), s));
  targets_of_edges_kernel<I><<<blocks, 256, 0, s>>>(A.rowptr, A.rows, perm, A.nnz, row);
  TESSERA_CUDA_LAUNCH_CHECK();
}

template <class I>
void attention_forward_cuda(const AttentionArgs<I>& a, const Exec& exec) {
  if (a.has_edge_features()) return cuda_attention::forward_edge<I>(a, exec);
  switch (a.query.dtype) {
    case DType::f32: return cuda_attention::forward_t<float, I, false>(a, exec);
    case DType::f64: return cuda_attention::forward_t<double, I, false>(a, exec);
    default: return cuda_attention::forward_half<I>(a, exec);
  }
}

template <class I>
void attention_backward_cuda(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  if (b.fwd.has_edge_features()) return cuda_attention::backward_edge<I>(b, exec);
  switch (b.fwd.query.dtype) {
    case DType::f32: return cuda_attention::backward_t<float, I, false>(b, exec, symmetric_path);
    case DType::f64: return cuda_attention::backward_t<double, I, false>(b, exec, symmetric_path);
    default: return cuda_attention::backward_half<I>(b, exec, symmetric_path);
  }
}

#define TESSERA_INSTANTIATE(I)                                                                     \
  template void build_attention_transpose_cuda(const CsrView<I>&, I*, I*, I*, const Exec&);       \
  template void attention_forward_cuda(const AttentionArgs<I>&, const Exec&);                     \
  template void attention_backward_cuda(const AttentionBackwardArgs<I>&, const Exec&, bool);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace detail
}  // namespace tessera::ops
