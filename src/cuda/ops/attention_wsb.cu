// Tensor-core Graph Transformer forward on the WSB format: eligibility and launcher of the
// variant "cuda.wsb" (device code: attention_wsb_kernels.cuh).
//
// The pattern comes from the per-graph WSB cache (wsb_device.cu) built with unit weights, so each
// cell's f16 tile value is its multiplicity (duplicates summed; exact up to 2048 copies of one
// edge, beyond that rounded by at most 2^-11 relative, below the outputs' own f16/bf16 rounding).
// The kernel reads those tiles only when the graph has duplicates (cells < entries); otherwise
// the 128-bit bitmaps alone mask the tiles.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "cuda/format/wsb_device.hpp"
#include "cuda/ops/attention_wsb_kernels.cuh"
#include "ops/attention/backends.hpp"
#include "ops/spmm/alignment.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::ops::detail {

namespace {

template <class T, class I, int C>
void launch(const AttentionArgs<I>& a, const cuda::WsbDevice& d, const Exec& exec) {
  namespace wa = cuda::wsb_attention;
  wa::Params<T, I> p;
  p.rows = d.rows;
  p.windows = d.windows;
  p.H = int(a.heads);
  p.window_ptr = d.window_ptr;
  p.block_cols = static_cast<const I*>(d.block_cols);
  p.bitmap = d.bitmap;
  p.mult = d.stats.cells < d.stats.entries ? static_cast<const __half*>(d.tiles) : nullptr;
  p.q = static_cast<const T*>(a.query.data); p.ldq = a.query.ld;
  p.k = static_cast<const T*>(a.key.data); p.ldk = a.key.ld;
  p.v = static_cast<const T*>(a.value.data); p.ldv = a.value.ld;
  p.out = static_cast<T*>(a.out.data); p.ldo = a.out.ld;
  p.lse = static_cast<float*>(a.lse);
  p.scale_log2 = float(a.logit_scale() * 1.4426950408889634);
  const int64_t items = d.windows * a.heads;
  const int64_t blocks = (items + wa::kWarps - 1) / wa::kWarps;
  TESSERA_CHECK(blocks <= INT32_MAX, "attention (cuda.wsb): ", items, " (window, head) items exceed the grid limit");
  constexpr size_t smem = wa::smem_bytes<C, T>();
  auto kernel = wa::attention_wsb_kernel<T, I, C>;
  if constexpr (smem > 48 * 1024)
    TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<unsigned(blocks), wa::kWarps * 32, smem, cuda_stream(exec.stream)>>>(p);
  TESSERA_CUDA_LAUNCH_CHECK();
}

template <class T, class I>
void launch_width(const AttentionArgs<I>& a, const cuda::WsbDevice& d, const Exec& exec) {
  switch (a.channels) {
    case 16: return launch<T, I, 16>(a, d, exec);
    case 32: return launch<T, I, 32>(a, d, exec);
    case 64: return launch<T, I, 64>(a, d, exec);
    case 128: return launch<T, I, 128>(a, d, exec);
    default: fail("attention (cuda.wsb): head width ", a.channels, " is not 16, 32, 64 or 128");
  }
}

}  // namespace

template <class I>
bool attention_wsb_eligible(const AttentionArgs<I>& a) {
  const DType t = a.query.dtype;
  const int64_t C = a.channels;
  // cp.async 16-byte gathers and 32-bit fragment loads / stores need 16-byte aligned rows.
  return a.kind == AttentionKind::transformer && (t == DType::f16 || t == DType::bf16) &&
         (C == 16 || C == 32 || C == 64 || C == 128) && a.dropout == 0 && a.alpha == nullptr && !a.out_bias &&
         !a.residual.data && !a.has_edge_features() && !a.shared_kv() && a.A.id != 0 && a.A.device.is_cuda() &&
         rows_vector_aligned(a.query) && rows_vector_aligned(a.key) && rows_vector_aligned(a.value) && rows_vector_aligned(a.out);
}

template <class I>
void attention_forward_cuda_wsb(const AttentionArgs<I>& a, const Exec& exec) {
  TESSERA_CHECK(attention_wsb_eligible(a), "attention (cuda.wsb): needs the Transformer in f16/bf16 with head width "
                "16, 32, 64 or 128, no dropout, no attention weights, bias, residual or edge features, a key and "
                "value per head, 16-byte aligned rows and a graph with an identity (A.id)");
  if (a.A.rows == 0) return;
  CsrView<I> pattern = a.A;
  pattern.values = nullptr;  // unit weights: the tiles hold each cell's multiplicity
  const auto d = cuda::wsb_device(pattern, DType::f16, exec);
  if (a.query.dtype == DType::f16) launch_width<__half, I>(a, *d, exec);
  else launch_width<__nv_bfloat16, I>(a, *d, exec);
}

template bool attention_wsb_eligible(const AttentionArgs<int32_t>&);
template bool attention_wsb_eligible(const AttentionArgs<int64_t>&);
template void attention_forward_cuda_wsb(const AttentionArgs<int32_t>&, const Exec&);
template void attention_forward_cuda_wsb(const AttentionArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::detail
