// CUDA half of TorchExec (compiled only when torch has CUDA): torch's current stream and its
// caching allocator, so tessera kernels order with the user's torch work and share its memory pool.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include "../views.hpp"

namespace tessera::pt {

namespace {
// Scratch from torch's caching allocator on the current stream (the device guard of TorchExec
// makes the tensor's device current). Blocks return to the pool on raw_delete and are reused in
// stream order, so no synchronization is needed.
class TorchCudaAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    if (bytes == 0) return nullptr;
    return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(
        bytes, c10::cuda::getCurrentCUDAStream().stream());
  }
  void deallocate(void* p) override {
    if (p) c10::cuda::CUDACachingAllocator::raw_delete(p);
  }
};
}  // namespace

void* torch_current_cuda_stream(int index) {
  return static_cast<void*>(c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).stream());
}

Allocator* torch_cuda_allocator() {
  static TorchCudaAllocator alloc;
  return &alloc;
}

}  // namespace tessera::pt
