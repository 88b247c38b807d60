#include "outputs.hpp"

#include <torch/library.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <utility>

#include "boundary.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

int64_t huge_output_min_bytes() {
  static const int64_t min_bytes = [] {
    const char* v = std::getenv("TESSERA_CPU_HUGE_OUTPUTS");
    return v != nullptr && std::strcmp(v, "0") == 0 ? std::numeric_limits<int64_t>::max()
                                                     : int64_t(kHugePageOutputBytes);
  }();
  return min_bytes;
}

size_t OutputCache::cap_from_env() {
  const char* v = std::getenv("TESSERA_CPU_OUTPUT_CACHE_MB");
  if (v == nullptr || *v == '\0') return kDefaultOutputCacheBytes;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(v, &end, 10);
  TESSERA_CHECK(end != nullptr && *end == '\0', "TESSERA_CPU_OUTPUT_CACHE_MB must be a whole number of MiB, got '",
                v, "'");
  return size_t(mb) << 20;
}

void* OutputCache::take(size_t len) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)  // the most recently freed first
    if (it->first == len) {
      void* p = it->second;
      blocks_.erase(std::next(it).base());
      cached_ -= len;
      return p;
    }
  return nullptr;
}

void OutputCache::give(void* p, size_t len) {
  std::unique_lock<std::mutex> lock(mu_);
  if (len > cap_) {
    lock.unlock();
    std::free(p);
    return;
  }
  std::deque<void*> evicted;
  while (cached_ + len > cap_) {  // the least recently freed go first
    cached_ -= blocks_.front().first;
    evicted.push_back(blocks_.front().second);
    blocks_.pop_front();
  }
  blocks_.emplace_back(len, p);
  cached_ += len;
  lock.unlock();
  for (void* q : evicted) std::free(q);
}

size_t OutputCache::release() {
  std::deque<std::pair<size_t, void*>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(blocks_);
    cached_ = 0;
  }
  size_t bytes = 0;
  for (const auto& [len, p] : all) {
    bytes += len;
    std::free(p);
  }
  return bytes;
}

size_t OutputCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

OutputCache& output_cache() {
  static OutputCache* cache = new OutputCache(OutputCache::cap_from_env());  // never destroyed: tensors may
  return *cache;                                                              // die after static destructors
}

at::Tensor empty_output(at::IntArrayRef sizes, const at::TensorOptions& options) {
  if (!options.device().is_cpu()) return at::empty(sizes, options);
  int64_t n = 1;
  for (const int64_t s : sizes) n *= s;
  const size_t bytes = size_t(n) * options.dtype().itemsize();
  if (int64_t(bytes) < huge_output_min_bytes()) return at::empty(sizes, options);
  constexpr size_t kHuge = size_t(2) << 20;
  const size_t len = (bytes + kHuge - 1) / kHuge * kHuge;  // aligned_alloc wants a multiple of the alignment
  OutputCache& cache = output_cache();
  void* p = cache.take(len);
  if (p == nullptr) {
    p = std::aligned_alloc(kHuge, len);
    if (p == nullptr) return at::empty(sizes, options);  // let torch's allocator report the failure
    madvise(p, len, MADV_HUGEPAGE);  // advice only: an error (THP unavailable) leaves ordinary pages
  }
  return at::from_blob(p, sizes, [len](void* q) { output_cache().give(q, len); }, options);
}

namespace {
// For the Python layers' dense projections (tessera/nn/_linear.py), whose outputs torch would
// allocate: a CPU tensor on the same memory as the ops' outputs.
at::Tensor empty_output_op(c10::ArrayRef<int64_t> sizes, c10::ScalarType dtype) {
  return empty_output(sizes, at::TensorOptions().dtype(dtype));
}
int64_t release_cached_outputs() { return int64_t(output_cache().release()); }
int64_t cached_output_bytes() { return int64_t(output_cache().cached_bytes()); }
}  // namespace

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("empty_output(int[] sizes, ScalarType dtype) -> Tensor", TESSERA_OP(tessera::pt::empty_output_op));
  m.def("huge_output_min_bytes() -> int", TESSERA_OP(tessera::pt::huge_output_min_bytes));
  m.def("release_cached_outputs() -> int", TESSERA_OP(tessera::pt::release_cached_outputs));
  m.def("cached_output_bytes() -> int", TESSERA_OP(tessera::pt::cached_output_bytes));
}
