#pragma once
// Whether autocast is on for a tensor's device type. Where it is, the layers leave their
// projections to torch (projections.hpp), which casts them as the user asked, and accept node
// features of another floating type than their parameters (layer_inputs.hpp).
#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace tessera::pt {

inline bool autocast_on(const at::Tensor& x) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(x.device().type());
#else  // torch 1.13 (Debian's): CUDA's call and the CPU's
  return x.is_cuda() ? at::autocast::is_enabled() : x.is_cpu() && at::autocast::is_cpu_enabled();
#endif
}

}  // namespace tessera::pt
