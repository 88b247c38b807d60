#pragma once
// The segment-reduce family's torch ops (schemas and kernels in segment_reduce_op.cpp):
//   tessera::segment_reduce(rowptr, col, x, reduce, graph_id=0) -> (out, arg)
//       out[i] = REDUCE over the in-neighbours j of i of x[j] (reduce: max, min, sum, mean),
//       semantics of include/tessera/ops/segment_reduce.hpp (empty rows 0 / arg -1, smallest source
//       index wins ties, NaN propagates). arg: int64 [rows, F] for max/min, an empty tensor else.
//       Autograd: max/min scatter the gradient to arg, sum/mean through the transpose.
//   tessera::segment_reduce_backward(rowptr, col, grad, arg, reduce, num_cols, graph_id=0) -> dx
#include <ATen/ATen.h>

#include <string>
#include <tuple>

namespace tessera::pt {

// Through the dispatcher (autograd-aware).
std::tuple<at::Tensor, at::Tensor> segment_reduce(const at::Tensor& rowptr, const at::Tensor& col,
                                                  const at::Tensor& x, const std::string& reduce,
                                                  int64_t graph_id = 0);

}  // namespace tessera::pt
