// Fused attention on CUDA with edge features (PyG's edge_dim): the EDGE kernels project each
// entry's features where they are used (attention_kernels.cuh). f32 / f64 here, f16 / bf16 in
// attention_edge_half.cu, apart from the edge-free instantiations so the units build in parallel.
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops::cuda_attention {

// Defined in attention_edge_half.cu.
template <class I> void forward_edge_half(const AttentionArgs<I>& a, const Exec& exec);
template <class I> void backward_edge_half(const AttentionBackwardArgs<I>& b, const Exec& exec);

template <class I>
void forward_edge(const AttentionArgs<I>& a, const Exec& exec) {
  switch (a.query.dtype) {
    case DType::f32: return forward_t<float, I, true>(a, exec);
    case DType::f64: return forward_t<double, I, true>(a, exec);
    default: return forward_edge_half<I>(a, exec);
  }
}

// Always the transpose walk: the symmetric one cannot find an entry's edge features.
template <class I>
void backward_edge(const AttentionBackwardArgs<I>& b, const Exec& exec) {
  switch (b.fwd.query.dtype) {
    case DType::f32: return backward_t<float, I, true>(b, exec, false);
    case DType::f64: return backward_t<double, I, true>(b, exec, false);
    default: return backward_edge_half<I>(b, exec);
  }
}

template void forward_edge(const AttentionArgs<int32_t>&, const Exec&);
template void forward_edge(const AttentionArgs<int64_t>&, const Exec&);
template void backward_edge(const AttentionBackwardArgs<int32_t>&, const Exec&);
template void backward_edge(const AttentionBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda_attention
