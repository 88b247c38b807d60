#pragma once
// Output tensors of the ops. On the CPU a fresh tensor of tens of MB is mmap'd by malloc and
// faulted in 4 KB page by page on first write: on the 2-core development machine a 32 MB output
// cost 15.8 ms to first touch against 2.2 ms on transparent huge pages (tools: a memset of a
// malloc'd vs a 2 MB-aligned, MADV_HUGEPAGE'd buffer), which is as long as the SpMM that fills
// it. So CPU outputs of at least kHugePageOutputBytes are 2 MB-aligned and advised for huge
// pages (the kernel's THP mode `madvise`, a common default; with `always` nothing changes, with
// `never` the advice is ignored). Memory is freed as usual when the tensor dies: nothing is
// cached. The tensor owns its memory through a deleter (at::from_blob), so it cannot grow by
// resize_ (no output of an op is resized in place). Other devices: at::empty.
// TESSERA_CPU_HUGE_OUTPUTS=0 (read once) turns this off: plain at::empty everywhere.
#include <ATen/ATen.h>

#include <cstddef>

namespace tessera::pt {

constexpr size_t kHugePageOutputBytes = size_t(4) << 20;

// The size from which CPU outputs go on huge pages: kHugePageOutputBytes, or INT64_MAX when
// TESSERA_CPU_HUGE_OUTPUTS=0 (also the op tessera::huge_output_min_bytes, so the Python layers
// take their huge-page path exactly when it applies).
int64_t huge_output_min_bytes();
at::Tensor empty_output(at::IntArrayRef sizes, const at::TensorOptions& options);
inline at::Tensor empty_output_like(const at::Tensor& t) { return empty_output(t.sizes(), t.options()); }

}  // namespace tessera::pt
