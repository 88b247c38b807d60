// CUDA runtime helpers for the core: device discovery and properties, and the default
// stream-ordered allocator.
#include <cuda_runtime.h>

#include <atomic>
#include <string>

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

int cuda_multiprocessors(int device) {
  if (device < 0) TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  static std::atomic<int> cached[64] = {};
  if (device < 64)
    if (const int n = cached[device].load(std::memory_order_relaxed)) return n;
  int n = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  if (device < 64) cached[device].store(n, std::memory_order_relaxed);
  return n;
}

std::string cuda_device_name(int index) {
  cudaDeviceProp p{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
}

}  // namespace tessera
