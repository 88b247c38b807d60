#pragma once
// Output tensors of the ops. On the CPU a fresh tensor of tens of MB is mmap'd by malloc and
// faulted in 4 KB page by page on first write: on the 2-core development machine a 32 MB output
// cost 15.8 ms to first touch against 2.2 ms on transparent huge pages (tools: a memset of a
// malloc'd vs a 2 MB-aligned, MADV_HUGEPAGE'd buffer), which is as long as the SpMM that fills
// it. So CPU outputs of at least kHugePageOutputBytes are 2 MB-aligned and advised for huge
// pages (the kernel's THP mode `madvise`, a common default; with `always` nothing changes, with
// `never` the advice is ignored). When such a tensor dies its block is kept for the next output
// of the same size (OutputCache): a training step allocates the same sizes as the last one, and a
// reused block is already faulted in, huge pages or not. The tensor owns its memory through a
// deleter (at::from_blob), so it cannot grow by resize_ (no output of an op is resized in
// place). Other devices: at::empty.
// TESSERA_CPU_HUGE_OUTPUTS=0 (read once) turns this off: plain at::empty everywhere.
// TESSERA_CPU_OUTPUT_CACHE_MB (read once; default 1024, 0: no cache) bounds the kept blocks; the
// op tessera::release_cached_outputs frees them (like torch.cuda.empty_cache).
#include <ATen/ATen.h>

#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace tessera::pt {

constexpr size_t kHugePageOutputBytes = size_t(4) << 20;
constexpr size_t kDefaultOutputCacheBytes = size_t(1024) << 20;

// Freed output blocks by length, for reuse: exact lengths only (a multiple of 2 MB), the most
// recently freed first; past the cap the least recently freed are returned to the system.
// Thread-safe (a tensor may die on any thread).
class OutputCache {
 public:
  explicit OutputCache(size_t cap_bytes) : cap_(cap_bytes) {}
  static size_t cap_from_env();  // TESSERA_CPU_OUTPUT_CACHE_MB, or the default
  void* take(size_t len);        // a kept block of exactly len bytes, or null
  void give(void* p, size_t len);  // keeps p (malloc'd, len bytes) or frees it
  size_t release();              // frees every kept block; returns their bytes
  size_t cached_bytes() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::pair<size_t, void*>> blocks_;  // oldest first
  size_t cached_ = 0;
  size_t cap_;
};
OutputCache& output_cache();

// The size from which CPU outputs go on huge pages: kHugePageOutputBytes, or INT64_MAX when
// TESSERA_CPU_HUGE_OUTPUTS=0 (also the op tessera::huge_output_min_bytes, so the Python layers
// take their huge-page path exactly when it applies).
int64_t huge_output_min_bytes();
at::Tensor empty_output(at::IntArrayRef sizes, const at::TensorOptions& options);
inline at::Tensor empty_output_like(const at::Tensor& t) { return empty_output(t.sizes(), t.options()); }

}  // namespace tessera::pt
