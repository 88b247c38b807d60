#pragma once
// The C++ layers' dense projections, with the Python layers' rules (python/tessera/nn/_linear.py),
// so a LibTorch user runs the same kernels as a Python one:
// - CUDA fp32, unless the user allowed TF32 in cuBLAS matmuls (at::globalContext().allowTF32CuBLAS():
//   torch's float32 matmul precision "high"/"medium", or TF32 matmuls allowed; then the Linear runs,
//   cuBLAS's TF32 as asked): tessera's tf32x3 tensor-core projection (tessera::linear), several
//   projections of one input as one op and one autograd node (tessera::linears).
// - CPU: one tessera::linears op when the output (or x) reaches the ops' huge-page size (outputs.hpp),
//   else the Linear itself.
// - Other devices and dtypes, and under autocast (which asks for the products in its own type):
//   the Linear itself.
#include <torch/torch.h>

#include <utility>
#include <vector>

namespace tessera::pt {

// [lin(x) for lin in lins].
std::vector<at::Tensor> linears(const std::vector<torch::nn::Linear>& lins, const at::Tensor& x);
// lin(x) by the same rules (the Python package's linear()).
at::Tensor linear(const torch::nn::Linear& lin, const at::Tensor& x);

// [lin(x) for (lin, x) in pairs]; the Linears reading one tensor go through one linears().
std::vector<at::Tensor> project(const std::vector<std::pair<torch::nn::Linear, at::Tensor>>& pairs);

// [x w^T + b for (w, b)] for weights a layer derives from its parameters (no Linear of their own;
// b may be undefined): one tessera::linears (its outputs are column blocks of one buffer), unless
// the user allowed TF32 on CUDA fp32 or autocast is on (then at::linear, as for a Linear).
std::vector<at::Tensor> products(const at::Tensor& x, const std::vector<at::Tensor>& weights,
                                 const std::vector<at::Tensor>& biases);
// Per-head projections side by side plus one every head shares (tessera::linear_heads,
// linear_heads_op.cpp), by the same rule: head h's column block of x (weight's in_features wide)
// times weight's row block h (+ bias), written into column block h of one output, + x2 weight2^T +
// bias2 over all of them. bias, x2, weight2 and bias2 may be undefined.
at::Tensor heads_product(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         const at::Tensor& x2 = {}, const at::Tensor& weight2 = {}, const at::Tensor& bias2 = {});

// out + lin(x) for an `out` the layer just made (see add_to_fresh, attention_op.hpp), with no
// [rows, out_features] projection written and read back where the types allow: on CUDA fp32 (the
// rule above) one tessera::linear with `out` as its residual, the projection and the sum in one
// kernel; elsewhere, with out, x and the weight of one type and autocast off, the GEMM accumulating
// into out in place (addmm_), then the bias; otherwise the projection, then add_to_fresh.
at::Tensor linear_add(const torch::nn::Linear& lin, const at::Tensor& x, at::Tensor out);

}  // namespace tessera::pt
