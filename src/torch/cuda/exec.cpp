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
  // torch's default stream is the legacy default stream, whose handle is null; an Exec's null
  // stream means "this host thread's per-thread stream" (cuda_stream, core/cuda_check.hpp). Passed
  // as null, every tessera kernel of a layer ran on the per-thread stream of the thread that
  // launched it: the forward on the Python thread's, the backward on the autograd engine thread's,
  // two streams ordered with each other only through torch's legacy-stream work in between. Blocks
  // of the caching allocator then went from one to the other while still in use: on the H200 the
  // backward's first scratch (W's split copy for dX) took the block of the forward attention's
  // heavy-row list while that kernel still ran on R-MAT, which then read node ids from tf32 bits
  // (an illegal address in R-MAT Transformer 4x64 training, only without CUDA_LAUNCH_BLOCKING:
  // bench/results/h200_20261203g). cudaStreamLegacy names the legacy stream itself.
  cudaStream_t s = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).stream();
  return static_cast<void*>(s != nullptr ? s : cudaStreamLegacy);
}

Allocator* torch_cuda_allocator() {
  static TorchCudaAllocator alloc;
  return &alloc;
}

}  // namespace tessera::pt
