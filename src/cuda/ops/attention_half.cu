// Fused attention on CUDA: the f16 and bf16 instantiations without edge features (fp32
// accumulation), compiled apart from attention.cu so the translation units build in parallel.
#include "cuda/ops/attention_launch.cuh"

namespace tessera::ops::cuda_attention {

template <class I>
void forward_half(const AttentionArgs<I>& a, const Exec& exec) {
  if (a.query.dtype == DType::f16) return forward_t<half_t, I, false>(a, exec);
  TESSERA_CHECK(a.query.dtype == DType::bf16, "attention (cuda): unsupported dtype ", dtype_name(a.query.dtype));
  forward_t<bf16_t, I, false>(a, exec);
}

template <class I>
void backward_half(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  if (b.fwd.query.dtype == DType::f16) return backward_t<half_t, I, false>(b, exec, symmetric_path);
  TESSERA_CHECK(b.fwd.query.dtype == DType::bf16, "attention_backward (cuda): unsupported dtype ",
                dtype_name(b.fwd.query.dtype));
  backward_t<bf16_t, I, false>(b, exec, symmetric_path);
}

template void forward_half(const AttentionArgs<int32_t>&, const Exec&);
template void forward_half(const AttentionArgs<int64_t>&, const Exec&);
template void backward_half(const AttentionBackwardArgs<int32_t>&, const Exec&, bool);
template void backward_half(const AttentionBackwardArgs<int64_t>&, const Exec&, bool);

}  // namespace tessera::ops::cuda_attention
