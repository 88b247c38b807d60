// CPU SpMM / SDDMM: OpenMP over rows (dynamic chunks, so power-law rows balance), SIMD over
// features, accumulation in float (double for float64) in a per-thread row buffer that stays in
// L1, so each X row is gathered once per edge and each Y row written once. The SpMM prefetches the
// X row of the entry kGatherAhead positions on (prefetch.hpp). The walks have an SSE2 and an AVX2
// copy (spmm_walks.inl through simd_copies.inl), picked at run time (simd.hpp).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ops/spmm/variants.hpp"
#include "prefetch.hpp"
#include "simd.hpp"

namespace tessera::ops::cpu {

namespace {
#define TESSERA_SIMD_WALKS "spmm_walks.inl"
#include "simd_copies.inl"
}  // namespace

template <class I>
void spmm(const SpmmArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, T, [&] { TESSERA_SIMD_CALL(spmm_typed<T>(a, exec)); });
}
template <class I>
void sddmm(const SddmmArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, T, [&] { TESSERA_SIMD_CALL(sddmm_typed<T>(a, exec)); });
}

template void spmm<int32_t>(const SpmmArgs<int32_t>&, const Exec&);
template void spmm<int64_t>(const SpmmArgs<int64_t>&, const Exec&);
template void sddmm<int32_t>(const SddmmArgs<int32_t>&, const Exec&);
template void sddmm<int64_t>(const SddmmArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::cpu
