#pragma once
// The optional biases of the multi-projection op tessera::linears: one per weight in the schema
// (Tensor?[]), undefined tensors inside the op, and only the existing ones as autograd inputs
// (autograd takes no undefined tensor as an input) with a flag per projection.
#include <ATen/ATen.h>
#include <ATen/core/List.h>

#include <vector>

namespace tessera::pt {

using OptTensorList = c10::List<c10::optional<at::Tensor>>;

inline std::vector<at::Tensor> to_vector(const OptTensorList& biases) {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < biases.size(); ++i) {
    const c10::optional<at::Tensor> b = biases.get(i);
    out.push_back(b.has_value() ? *b : at::Tensor());
  }
  return out;
}

inline OptTensorList to_optional_list(const std::vector<at::Tensor>& biases) {
  OptTensorList out;
  for (const at::Tensor& b : biases) out.push_back(b.defined() ? c10::optional<at::Tensor>(b) : c10::nullopt);
  return out;
}

// The biases that exist (autograd's inputs) and which projections have one.
struct PresentBiases {
  std::vector<at::Tensor> present;
  c10::List<bool> has_bias;
};
inline PresentBiases present_biases(const std::vector<at::Tensor>& biases) {
  PresentBiases p;
  for (const at::Tensor& b : biases) {
    p.has_bias.push_back(b.defined());
    if (b.defined()) p.present.push_back(b);
  }
  return p;
}

// The inverse inside the autograd function's forward: one tensor per projection, undefined where
// has_bias is false.
inline std::vector<at::Tensor> all_biases(at::TensorList present, const c10::List<bool>& has_bias) {
  std::vector<at::Tensor> out;
  for (size_t i = 0, j = 0; i < has_bias.size(); ++i) out.push_back(has_bias.get(i) ? present[j++] : at::Tensor());
  return out;
}

}  // namespace tessera::pt
