#pragma once
// The attention walks' schedules kept per graph (host side; the Schedule that uses them is in
// attention_launch.cuh).
//
// Why: a walk's schedule is two work counters and the list of the nodes above the heavy threshold.
// Built per call, it cost each walk an allocation, a clearing memset and a collecting launch ahead
// of its kernel (three in a training step), which on Cora-sized graphs is host time of a layer
// whose whole GPU work is tens of microseconds. Kept per graph, it costs nothing after the first
// call: the list does not change, and the walk's last block hands the counters back zeroed
// (for_each_item in attention_kernels.cuh).
//
// Key: (graph id, walk, its nodes and entries, heavy threshold, index width, device, stream). The
// graph id (CsrView::id) names the graph's contents, so a reused pointer never meets a stale list;
// id 0 (anonymous graphs) is never cached. The stream is in the key because the counters are state
// its kernels pass on to each other in order. Not cached while the stream is being captured into a
// CUDA graph (a replayed build would add to the list again) or with
// TESSERA_ATTENTION_SCHEDULE_CACHE=0 (for A/B measurements). A bounded LRU: 64 entries of at most
// 16 bytes + 8 per threshold's worth of entries (126 KB for R-MAT 2^20), thread-safe, cleared by
// attention_clear_caches().
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace tessera::ops::cuda_attention {

// The walks of one graph: its rows (forward, targets pass), the transpose's (sources pass) and the
// rows again as the symmetric path's sources pass. That last one is the targets walk itself, but a
// backward holds both of its schedules at once, and one entry's lock cannot be taken twice.
enum class Walk : int { targets = 0, sources = 1, symmetric_sources = 2 };

struct ScheduleKey {
  uint64_t graph = 0;
  Walk walk = Walk::targets;
  int64_t nodes = 0, nnz = 0;  // the walk's own sizes too: a view sliced under its graph's id misses
  int64_t threshold = 0;
  int index_bytes = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
  bool operator==(const ScheduleKey&) const = default;
};

struct CachedSchedule {
  std::mutex mu;            // held by one call from its check of `built` through its kernel's launch
  void* device = nullptr;   // the schedule's memory (cudaMalloc, freed with the entry)
  bool built = false;       // the list is collected and the counters are zero between kernels
  CachedSchedule() = default;
  CachedSchedule(const CachedSchedule&) = delete;
  CachedSchedule& operator=(const CachedSchedule&) = delete;
  ~CachedSchedule();
};

// The kept schedule of `key` (`bytes` of device memory on its first use), or nullptr where none is
// kept: an anonymous graph, a capturing stream, or caching turned off.
std::shared_ptr<CachedSchedule> cached_schedule(const ScheduleKey& key, size_t bytes);
void schedule_cache_clear();
size_t schedule_cache_size();

}  // namespace tessera::ops::cuda_attention
