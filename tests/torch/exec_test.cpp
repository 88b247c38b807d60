// TorchExec (src/torch/views.hpp): the tessera kernels a torch op launches run on torch's current
// stream itself. torch's default stream has a null handle, which an Exec reads as "this host
// thread's per-thread stream"; passed through, a layer's forward (Python thread) and backward
// (autograd engine thread) ran on two streams the caching allocator does not order
// (bench/results/h200_20261203g). GPU cases are named *Cuda*.
#include <torch/torch.h>

#include "support/testing.hpp"
#include "torch/views.hpp"

#ifdef TESSERA_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#endif

namespace tessera {
namespace {

TEST(TorchExecCuda, RunsOnTorchsCurrentStream) {
  TESSERA_REQUIRE_CUDA();
#ifndef TESSERA_TORCH_CUDA
  GTEST_SKIP() << "torch has no CUDA in this build";
#else
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch sees no CUDA device";
  const auto t = torch::zeros({4}, torch::kCUDA);
  {
    const pt::TorchExec ex(t);  // torch's default stream: the legacy default stream, not null
    EXPECT_EQ(ex.get().stream, static_cast<void*>(cudaStreamLegacy));
  }
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  const c10::cuda::CUDAStreamGuard guard(side);
  const pt::TorchExec ex(t);
  EXPECT_EQ(ex.get().stream, static_cast<void*>(side.stream()));
#endif
}

}  // namespace
}  // namespace tessera
