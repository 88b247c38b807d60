#pragma once
// Entry points of the segment-reduce backends (reference/, cpu/, cuda/). Arguments arrive
// validated by src/ops/segment_reduce/segment_reduce.cpp; backends do not re-check shapes.
#include <cstdint>

#include "tessera/ops/segment_reduce.hpp"

namespace tessera::ops::detail {

template <class I> void segment_reduce_reference(const SegmentReduceArgs<I>& a);
template <class I> void segment_reduce_backward_reference(const SegmentReduceBackwardArgs<I>& a);

template <class I> void segment_reduce_cpu(const SegmentReduceArgs<I>& a, const Exec& exec);
template <class I> void segment_reduce_backward_cpu(const SegmentReduceBackwardArgs<I>& a, const Exec& exec);

// One CUDA variant: split quantile (<= 0: no split), warps per block of the light kernel (also of
// the heavy kernel's blocks), edges per heavy chunk.
struct CudaSegmentConfig {
  double quantile = 0.99;
  int warps = 8;
  int chunk = 256;
};
template <class I>
void segment_reduce_cuda(const SegmentReduceArgs<I>& a, const Exec& exec, const CudaSegmentConfig& cfg);
// Largest in-degree of a device graph (one D2H copy of the offsets); for the tuner's skew class.
template <class I> int64_t max_degree_cuda(const CsrView<I>& g, const Exec& exec);
template <class I>
void segment_reduce_backward_cuda(const SegmentReduceBackwardArgs<I>& a, const Exec& exec);

}  // namespace tessera::ops::detail
