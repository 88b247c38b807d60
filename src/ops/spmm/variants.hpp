#pragma once
// Internal: the backend entry points behind the SpMM registry. Arguments arrive validated
// (validate_spmm / validate_sddmm), so backends only check what is specific to them.
#include "tessera/ops/spmm.hpp"
#include "tessera/tune/registry.hpp"

namespace tessera::ops {

namespace reference {
template <class I> void spmm(const SpmmArgs<I>& a);
template <class I> void sddmm(const SddmmArgs<I>& a);
}  // namespace reference

namespace cpu {
template <class I> void spmm(const SpmmArgs<I>& a, const Exec& exec);
template <class I> void sddmm(const SddmmArgs<I>& a, const Exec& exec);
}  // namespace cpu

#ifdef TESSERA_WITH_CUDA
namespace cuda {
// cuSPARSE SpMM (f32/f64) with the per-graph descriptor/workspace/algorithm cache.
template <class I> void spmm_cusparse(const SpmmArgs<I>& a, const Exec& exec);
bool cusparse_supports(DType t);
void cusparse_cache_clear();
size_t cusparse_cache_size();
void cusparse_cache_set_capacity(size_t entries);

// Custom CSR kernels: a warp (or sub-warp for narrow rows) per row with 16-byte loads, and the
// feature-parallel kernel for F <= 32 (threads over (row, feature), several rows per warp).
template <class I> void spmm_warp_row(const SpmmArgs<I>& a, const Exec& exec);
template <class I> void spmm_feature_parallel(const SpmmArgs<I>& a, const Exec& exec);
constexpr int64_t kFeatureParallelMaxWidth = 32;

template <class I> void sddmm(const SddmmArgs<I>& a, const Exec& exec);

// Y[i, :] += bias for every row (no-op for a null bias): for the variants that cannot fuse it.
void add_row_bias(const DenseView& Y, const void* bias, const Exec& exec);

// Longest row of a device CSR (copies rowptr to the host once; used for the tuner signature).
template <class I> int64_t max_row_length(const CsrView<I>& g, const Exec& exec);
// Drops the cached long-row split plans of the custom kernels.
void row_plan_cache_clear();
}  // namespace cuda

// Defined by the WSB tensor-core family (src/cuda/ops/spmm_wsb*) in CUDA builds.
template <class I> void register_spmm_wsb_variants(tune::Registry<SpmmArgs<I>>& reg);
#endif

}  // namespace tessera::ops
