// Fused attention on CUDA with edge features: the f16 and bf16 instantiations (fp32
// accumulation), compiled apart from attention_edge.cu so the translation units build in parallel.
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops::cuda_attention {

template <class I>
void forward_edge_half(const AttentionArgs<I>& a, const Exec& exec) {
  if (a.query.dtype == DType::f16) return forward_t<half_t, I, true>(a, exec);
  TESSERA_CHECK(a.query.dtype == DType::bf16, "attention (cuda): unsupported dtype ", dtype_name(a.query.dtype));
  forward_t<bf16_t, I, true>(a, exec);
}

template <class I>
void backward_edge_half(const AttentionBackwardArgs<I>& b, const Exec& exec) {
  if (b.fwd.query.dtype == DType::f16) return backward_t<half_t, I, true>(b, exec, false);
  TESSERA_CHECK(b.fwd.query.dtype == DType::bf16, "attention_backward (cuda): unsupported dtype ",
                dtype_name(b.fwd.query.dtype));
  backward_t<bf16_t, I, true>(b, exec, false);
}

template void forward_edge_half(const AttentionArgs<int32_t>&, const Exec&);
template void forward_edge_half(const AttentionArgs<int64_t>&, const Exec&);
template void backward_edge_half(const AttentionBackwardArgs<int32_t>&, const Exec&);
template void backward_edge_half(const AttentionBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda_attention
