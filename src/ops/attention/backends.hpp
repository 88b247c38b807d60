#pragma once
// Entry points of the attention backends (reference, cpu, cuda); the dispatcher in
// attention.cpp validates once and registers these as variants.
#include "tessera/ops/attention.hpp"

namespace tessera::ops::detail {

// Accumulation type of a storage type: double for double, float otherwise.
template <class T> struct acc_of { using type = float; };
template <> struct acc_of<double> { using type = double; };

template <class I> void attention_forward_reference(const AttentionArgs<I>& a, const Exec& exec);
template <class I> void attention_backward_reference(const AttentionBackwardArgs<I>& a, const Exec& exec);

template <class I> void attention_forward_cpu(const AttentionArgs<I>& a, const Exec& exec);
// symmetric_path: walk A itself for source-side gradients (no transpose).
template <class I> void attention_backward_cpu(const AttentionBackwardArgs<I>& a, const Exec& exec,
                                               bool symmetric_path);
template <class I> void build_attention_transpose_cpu(const CsrView<I>& A, I* colptr, I* row, I* perm);

#ifdef TESSERA_WITH_CUDA
// Largest head width the CUDA kernels hold in registers.
inline constexpr int64_t kCudaAttentionMaxChannels = 512;
template <class I> void attention_forward_cuda(const AttentionArgs<I>& a, const Exec& exec);
template <class I> void attention_backward_cuda(const AttentionBackwardArgs<I>& a, const Exec& exec,
                                                bool symmetric_path);
template <class I> void build_attention_transpose_cuda(const CsrView<I>& A, I* colptr, I* row, I* perm,
                                                       const Exec& exec);
// The tensor-core Transformer forward on the WSB format (attention_wsb.cu) and its conditions.
template <class I> bool attention_wsb_eligible(const AttentionArgs<I>& a);
template <class I> void attention_forward_cuda_wsb(const AttentionArgs<I>& a, const Exec& exec);
// The multi-query forward (attention_multi_query.cu): one warp per target and group of heads
// sharing a key row that is also the value, and its conditions (the heuristics take it wherever
// they hold).
template <class I> bool attention_multi_query_eligible(const AttentionArgs<I>& a);
template <class I> void attention_forward_cuda_multi_query(const AttentionArgs<I>& a, const Exec& exec);
// Drops the walks' schedules kept per graph (attention_schedule.cu).
void attention_schedule_cache_clear();
#endif

}  // namespace tessera::ops::detail
