#pragma once
// The projection kernel behind tessera::linear, tessera::linears and tessera::linear_heads
// (linear_op.cpp, linears_op.cpp, linear_heads_op.cpp).
#include <ATen/ATen.h>

#include <utility>
#include <vector>

#include "tessera/ops/linear.hpp"

namespace tessera::pt {

// tessera::linear and tessera::linears through the dispatcher: with autograd from a layer
// (projections.hpp), below it under at::AutoDispatchBelowADInplaceOrView from the ops' own autograd
// functions. biases: one per weight, undefined for a projection without one.
at::Tensor call_linear(const at::Tensor& x, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                       const c10::optional<at::Tensor>& residual = {},
                       const c10::optional<at::Tensor>& weight_split = {});
std::vector<at::Tensor> call_linears(const at::Tensor& x, at::TensorList weights, const std::vector<at::Tensor>& biases);
// tessera::linear_heads (linear_heads_op.cpp) through the dispatcher: head h's column block of x
// projected by weight's row block h (+ bias), side by side, plus x2 weight2^T + bias2 over all of
// them; x2, weight2 and the biases may be undefined. weight_split: linear_split_weight(weight, weight2)
// kept by the caller, or undefined.
at::Tensor linear_heads(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& x2,
                        const at::Tensor& weight2, const at::Tensor& bias2, const at::Tensor& weight_split = {});

// y = x weight^T (+ bias) (+ residual) on tessera's CUDA fp32 kernel (tf32x3), where y is a
// [rows, out_features] tensor with packed columns, possibly a column slice of a wider one, and
// residual is undefined, a tensor of y's shape, or y itself (y += x weight^T + bias). With
// w_transposed, y = x weight (+ ...) for a [in, out] weight as it is stored: a Linear's input
// gradient dy W without a transposed copy of W. Returns false, writing nothing, when no variant is
// eligible (not CUDA fp32, misaligned rows, odd widths): the caller then takes torch's path.
// weight_split (optional): tessera::linear_split_weight(weight), kept by a caller whose weight has not
// changed since, so the kernel launches no split of its own.
bool linear_into(const at::Tensor& y, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                 const at::Tensor& residual, bool w_transposed = false, const at::Tensor& weight_split = {});

// A kept weight split (tessera::linear_split_weight's tensor; undefined or empty: none) as
// LinearArgs::w_split, after checking it is one: the core then checks it against the weights' shape.
void attach_weight_split(ops::LinearArgs& a, const at::Tensor& w_split, const at::Tensor& x, const char* op);

// A Linear's input gradient dx + dy weight for its [out, in] weight (dx undefined: dy weight), in
// dx's buffer once it exists: on CUDA fp32 the kernel reads the weight as stored and adds dx in its
// epilogue; elsewhere mm / addmm_, a fresh CPU dx on the ops' output memory (outputs.hpp). Under
// create_graph, ops autograd records, so the gradient can itself be differentiated. The backward
// of tessera::linear and of tessera::linears (one call per projection, or per run of them).
at::Tensor add_input_grad(at::Tensor dx, const at::Tensor& dy, const at::Tensor& weight);

// A Linear's parameter gradients for a [rows, out] dy and [rows, in] x: dw = dy^T x (when want_w,
// else undefined) and db = the column sums of dy (when want_b). On CUDA fp32 on compute capability
// 9.0 both come from one pass of tessera::ops::linear_weight_grad (wgmma; db from the same loads of
// dy); elsewhere, or under create_graph, dy^T x and column_sums (column_sums.hpp).
std::pair<at::Tensor, at::Tensor> weight_grads(const at::Tensor& dy, const at::Tensor& x, bool want_w, bool want_b);

}  // namespace tessera::pt
