// The per-graph cache of the attention walks' schedules (attention_schedule.hpp says why and how).
#include "cuda/ops/attention_schedule.hpp"

#include <cstdlib>
#include <list>
#include <string>
#include <utility>

#include "ops/attention/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::ops::cuda_attention {

namespace {

constexpr size_t kEntries = 64;

struct ScheduleCache {
  std::mutex mu;
  std::list<std::pair<ScheduleKey, std::shared_ptr<CachedSchedule>>> lru;  // most recently used first
};

ScheduleCache& cache() {
  static ScheduleCache* c = new ScheduleCache();  // leaked: entries may hold device memory past CUDA teardown
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
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto it = c.lru.begin(); it != c.lru.end(); ++it)
    if (it->first == key) {
      c.lru.splice(c.lru.begin(), c.lru, it);
      return c.lru.front().second;
    }
  auto entry = std::make_shared<CachedSchedule>();
  TESSERA_CUDA_CHECK(cudaMalloc(&entry->device, bytes));
  c.lru.emplace_front(key, entry);
  while (c.lru.size() > kEntries) c.lru.pop_back();  // an entry in use lives on through its holder
  return entry;
}

void schedule_cache_clear() {
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.lru.clear();
}

size_t schedule_cache_size() {
  auto& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.lru.size();
}

}  // namespace tessera::ops::cuda_attention

namespace tessera::ops::detail {
void attention_schedule_cache_clear() { cuda_attention::schedule_cache_clear(); }
}  // namespace tessera::ops::detail
