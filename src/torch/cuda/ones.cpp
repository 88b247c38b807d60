// The vector of ones behind column_sums' gemv (column_sums.hpp), kept per device and dtype.
//
// Why: making it per call is an allocation, a fill launch and two dispatcher calls, ~30 us of host
// time on the H200's host (bench/results/h200_20261203d, host_gatv2_*.txt: aten::ones), and a GATv2
// training step takes three column sums. The kept vector is only read. It is made or grown outside
// CUDA graph capture only, and the stream is synchronized once after its fill, so every later
// reader, on any stream or inside a captured graph, sees the ones; under capture a vector too
// short is made per call, as before. It is never freed (a handful of MB at most: rows x 4 bytes
// for the largest gradient seen) and deliberately leaked at exit, when the CUDA context may
// already be gone.
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "../column_sums.hpp"

namespace tessera::pt {

at::Tensor cuda_ones(int64_t n, const at::TensorOptions& options) {
  static std::mutex mu;
  static auto* kept = new std::map<std::pair<int, int>, at::Tensor>();  // (device, dtype) -> ones
  const std::pair<int, int> key{int(options.device().index()), int(options.dtype().toScalarType())};
  std::lock_guard<std::mutex> lock(mu);
  auto it = kept->find(key);
  if (it != kept->end() && it->second.numel() >= n) return it->second.narrow(0, 0, n);
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None)
    return at::ones({n}, options);
  const int64_t len = std::max<int64_t>(n, it == kept->end() ? 0 : 2 * it->second.numel());
  at::Tensor ones = at::ones({len}, options);
  c10::cuda::getCurrentCUDAStream(options.device().index()).synchronize();
  (*kept)[key] = ones;
  return ones.narrow(0, 0, n);
}

}  // namespace tessera::pt
