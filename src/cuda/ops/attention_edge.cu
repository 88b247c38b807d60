// Fused attention on CUDA with edge features (PyG's edge_dim), every dtype: the EDGE kernels
// project each entry's features where they are used (attention_kernels.cuh), compiled apart from
// the edge-free instantiations so the translation units build in parallel.
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops::cuda_attention {

template <class I>
void forward_edge(const AttentionArgs<I>& a, const Exec& exec) {
  switch (a.query.dtype) {
    case DType::f32: return forward_t<float, I, true>(a, exec);
    case DType::f64: return forward_t<double, I, true>(a, exec);
    case DType::f16: return forward_t<half_t, I, true>(a, exec);
    case DType::bf16: return forward_t<bf16_t, I, true>(a, exec);
    default: fail("attention (cuda): unsupported dtype ", dtype_name(a.query.dtype));
  }
}

// Always the transpose walk: the symmetric one cannot find an entry's edge features.
template <class I>
void backward_edge(const AttentionBackwardArgs<I>& b, const Exec& exec) {
  switch (b.fwd.query.dtype) {
    case DType::f32: return backward_t<float, I, true>(b, exec, false);
    case DType::f64: return backward_t<double, I, true>(b, exec, false);
    case DType::f16: return backward_t<half_t, I, true>(b, exec, false);
    case DType::bf16: return backward_t<bf16_t, I, true>(b, exec, false);
    default: fail("attention_backward (cuda): unsupported dtype ", dtype_name(b.fwd.query.dtype));
  }
}

template void forward_edge(const AttentionArgs<int32_t>&, const Exec&);
template void forward_edge(const AttentionArgs<int64_t>&, const Exec&);
template void backward_edge(const AttentionBackwardArgs<int32_t>&, const Exec&);
template void backward_edge(const AttentionBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda_attention
