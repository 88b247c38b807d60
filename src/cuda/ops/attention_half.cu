// Fused attention on CUDA: the f16 and bf16 instantiations without edge features (fp32
// accumulation), compiled apart from attention.cu so the translation units build in parallel.
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops::cuda_attention {

template <class I>
void forward_half(const AttentionArgs<I>& a, const Exec& exec) {
  forward_half_t<I, false>(a, exec);
}

template <class I>
void backward_half(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  backward_half_t<I, false>(b, exec, symmetric_path);
}

template void forward_half(const AttentionArgs<int32_t>&, const Exec&);
template void forward_half(const AttentionArgs<int64_t>&, const Exec&);
template void backward_half(const AttentionBackwardArgs<int32_t>&, const Exec&, bool);
template void backward_half(const AttentionBackwardArgs<int64_t>&, const Exec&, bool);

}  // namespace tessera::ops::cuda_attention
