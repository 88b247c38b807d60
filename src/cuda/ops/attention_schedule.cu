// The per-graph cache of the attention walks' schedules (attention_schedule.hpp says why and how).
#include "cuda/ops/attention_schedule.hpp"

#include <cstdlib>
#include <string>

#include "ops/attention/backends.hpp"
#include "tessera/core/cuda_check.hpp"
#include "tessera/core/lru_cache.hpp"

namespace tessera::ops::cuda_attention {

namespace {

constexpr size_t kEntries = 64;

using ScheduleCache = LruCache<ScheduleKey, CachedSchedule>;

ScheduleCache& cache() {
  // Leaked: entries may hold device memory past CUDA teardown.
  static ScheduleCache* c = new ScheduleCache(kEntries);
  return *c;
}

bool caching_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("TESSERA_ATTENTION_SCHEDULE_CACHE");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TESSERA_CUDA_CHECK(cudaStreamIsCapturing(s, &status));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

CachedSchedule::~CachedSchedule() {
  if (device) cudaFree(device);  // waits for the kernels still using it
}

std::shared_ptr<CachedSchedule> cached_schedule(const ScheduleKey& key, size_t bytes) {
  if (key.graph == 0 || !caching_enabled() || capturing(key.stream)) return nullptr;
  // Made under the cache's lock; beyond kEntries, an evicted entry in use lives on through its holder.
  return cache().get_or_make(key, [bytes] {
    auto entry = std::make_shared<CachedSchedule>();
    TESSERA_CUDA_CHECK(cudaMalloc(&entry->device, bytes));
    return entry;
  });
}

void schedule_cache_clear() { cache().clear(); }

size_t schedule_cache_size() { return cache().size(); }

}  // namespace tessera::ops::cuda_attention

namespace tessera::ops::detail {
void attention_schedule_cache_clear() { cuda_attention::schedule_cache_clear(); }
}  // namespace tessera::ops::detail
