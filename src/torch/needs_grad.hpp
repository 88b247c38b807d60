#pragma once
// Whether an op's Autograd kernel must record a graph node: grad mode is on and some
// differentiable input requires a gradient. When not (inference, torch.no_grad, frozen inputs)
// the ops call their device kernels directly: torch::autograd::Function::apply builds a node and
// its saved state even then, which was most of an op's host time on small graphs.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace tessera::pt {

inline bool requires_grad_of(const at::Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool requires_grad_of(const c10::optional<at::Tensor>& t) { return t.has_value() && requires_grad_of(*t); }

template <class... T>
bool needs_grad(const T&... inputs) {
  return c10::GradMode::is_enabled() && (requires_grad_of(inputs) || ...);
}

}  // namespace tessera::pt
