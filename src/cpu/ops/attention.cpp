// Attention CPU backend. Every walk is OpenMP over fixed chunks of rows (targets, or sources for
// the backward's second pass) cut by edge count, so hub rows do not serialize a thread and the
// work split does not depend on the thread count. Each row walks its entries with all heads
// inside (one gather of a neighbour's H*C features per entry, not one per head) and contiguous
// inner loops over the channels marked `omp simd` (the float reductions vectorize). No edge
// tensors: per-thread scratch of one row's entries x H only (logits, probabilities).
//
// Why not the earlier streaming layout: walking each head separately re-gathered every neighbour
// H times, the online-softmax rescale and the two accumulator sets per channel (Delta-free parts
// of dq/datt) doubled the inner work, and the sources pass's logit sum did not vectorize.
// Results are bitwise the same for any thread count (at one SIMD width, below): rows are computed
// sequentially by one thread, and datt sums per-chunk partials in chunk order.
//
// The walks (attention_walks.inl) are compiled in an SSE2 and an AVX2 copy (simd_copies.inl),
// picked at run time (simd.hpp; TESSERA_CPU_SIMD caps it). GATv2's walks gain ~24%.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/attention/backends.hpp"
#include "prefetch.hpp"
#include "simd.hpp"

namespace tessera::ops::detail {
namespace {
#define TESSERA_SIMD_WALKS "attention_walks.inl"
#include "simd_copies.inl"
}  // namespace

template <class I>
void build_attention_transpose_cpu(const CsrView<I>& A, I* colptr, I* row, I* perm) {
  std::fill(colptr, colptr + A.cols + 1, I(0));
  for (int64_t e = 0; e < A.nnz; ++e) ++colptr[A.col[e] + 1];
  for (int64_t j = 0; j < A.cols; ++j) colptr[j + 1] += colptr[j];
  std::vector<I> next(colptr, colptr + A.cols);
  for (int64_t i = 0; i < A.rows; ++i)  // rows in order, so each source's list is by position
    for (int64_t e = A.rowptr[i]; e < A.rowptr[i + 1]; ++e) {
      const I t = next[A.col[e]]++;
      row[t] = I(i);
      perm[t] = I(e);
    }
}

template <class I>
void attention_forward_cpu(const AttentionArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.query.dtype, T, [&] { TESSERA_SIMD_CALL(forward<T, I>(a, exec)); });
}
template <class I>
void attention_backward_cpu(const AttentionBackwardArgs<I>& b, const Exec& exec, bool symmetric_path) {
  TESSERA_DISPATCH_FLOAT(b.fwd.query.dtype, T, [&] { TESSERA_SIMD_CALL(backward<T, I>(b, exec, symmetric_path)); });
}

#define TESSERA_INSTANTIATE(I)                                                                    \
  template void build_attention_transpose_cpu(const CsrView<I>&, I*, I*, I*);                     \
  template void attention_forward_cpu(const AttentionArgs<I>&, const Exec&);                      \
  template void attention_backward_cpu(const AttentionBackwardArgs<I>&, const Exec&, bool);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::ops::detail
