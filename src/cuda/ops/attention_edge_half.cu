// Fused attention on CUDA with edge features: the f16 and bf16 instantiations (fp32
// accumulation), compiled apart from attention_edge.cu so the translation units build in parallel.
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops::cuda_attention {

template <class I>
void forward_edge_half(const AttentionArgs<I>& a, const Exec& exec) {
  forward_half_t<I, true>(a, exec);
}

// Always the transpose walk: the symmetric one cannot find an entry's edge features.
template <class I>
void backward_edge_half(const AttentionBackwardArgs<I>& b, const Exec& exec) {
  backward_half_t<I, true>(b, exec, false);
}

template void forward_edge_half(const AttentionArgs<int32_t>&, const Exec&);
template void forward_edge_half(const AttentionArgs<int64_t>&, const Exec&);
template void backward_edge_half(const AttentionBackwardArgs<int32_t>&, const Exec&);
template void backward_edge_half(const AttentionBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda_attention
