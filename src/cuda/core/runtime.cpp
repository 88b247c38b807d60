// CUDA runtime helpers for the core: device discovery and properties, and the default
// stream-ordered allocator.
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "tessera/core/cuda_check.hpp"
#include "tessera/core/device.hpp"

namespace tessera {

namespace {
// Stream-ordered pool (cudaMallocAsync): after warm-up, allocations come from the pool, so
// scratch buffers in a hot path do not reach the driver.
class CudaPoolAllocator final : public Allocator {
 public:
  explicit CudaPoolAllocator(cudaStream_t s) : stream_(s) {}
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    TESSERA_CUDA_CHECK(cudaMallocAsync(&p, bytes, stream_));
    return p;
  }
  void deallocate(void* p) override { cudaFreeAsync(p, stream_); }
 private:
  cudaStream_t stream_;
};
}  // namespace

Allocator& cuda_default_allocator(const Exec& exec) {
  // One allocator object per thread and stream: cheap, and free is ordered on the same stream.
  thread_local CudaPoolAllocator* last = nullptr;
  thread_local cudaStream_t last_stream = nullptr;
  cudaStream_t s = cuda_stream(exec.stream);
  if (!last || last_stream != s) {
    delete last;
    last = new CudaPoolAllocator(s);
    last_stream = s;
  }
  return *last;
}

bool cuda_runtime_available() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return n > 0;
}

namespace {
// A device attribute, queried once per device (-1: the current one): grid sizing, schedules and
// variant eligibility ask on every launch. `cached` is the caller's table of value + 1 (0: not yet).
int cached_attribute(std::atomic<int> (&cached)[64], cudaDeviceAttr attr, int device) {
  if (device < 0) TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 64)
    if (const int v = cached[device].load(std::memory_order_relaxed)) return v - 1;
  int n = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&n, attr, device));
  if (device < 64) cached[device].store(n + 1, std::memory_order_relaxed);
  return n;
}
}  // namespace

int cuda_multiprocessors(int device) {
  static std::atomic<int> cached[64] = {};
  return cached_attribute(cached, cudaDevAttrMultiProcessorCount, device);
}

int cuda_compute_capability(int device) {
  static std::atomic<int> major[64] = {}, minor[64] = {};
  return 10 * cached_attribute(major, cudaDevAttrComputeCapabilityMajor, device) +
         cached_attribute(minor, cudaDevAttrComputeCapabilityMinor, device);
}

int cuda_resident_blocks(const void* kernel, int threads, size_t smem) {
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int, size_t>, int> resident;  // a few dozen kernels
  static std::map<std::pair<int, const void*>, size_t> opted;                 // the smem limit set
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(device, kernel, threads, smem);
  if (const auto it = resident.find(key); it != resident.end()) return it->second;
  if (smem > 48 * 1024) {
    size_t& limit = opted[{device, kernel}];
    if (smem > limit) {
      TESSERA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      limit = smem;
    }
  }
  int per_sm = 0;
  TESSERA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  resident.emplace(key, per_sm);
  return per_sm;
}

std::string cuda_device_name(int index) {
  cudaDeviceProp p{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
}

}  // namespace tessera
