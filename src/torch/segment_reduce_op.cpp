// tessera::segment_reduce and its backward: schemas, CPU/CUDA kernels (thin calls into
// ops::segment_reduce / ops::segment_reduce_backward through views.hpp) and the Autograd kernel.
// Laid out like spmm_op.cpp.
#include "boundary.hpp"
#include "segment_reduce_op.hpp"

#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include "tessera/ops/segment_reduce.hpp"
#include "needs_grad.hpp"
#include "outputs.hpp"
#include "views.hpp"

namespace tessera::pt {

namespace {

std::tuple<at::Tensor, at::Tensor> segment_reduce_kernel(const at::Tensor& rowptr, const at::Tensor& col,
                                                         const at::Tensor& x_in, c10::string_view reduce_name,
                                                         int64_t graph_id) {
  const ops::Reduce red = ops::parse_reduce(std::string(reduce_name));
  TESSERA_CHECK(x_in.dim() == 2, "segment_reduce: x must be 2-D (nodes x features), got shape ", x_in.sizes());
  TESSERA_CHECK(rowptr.dim() == 1 && rowptr.size(0) >= 1, "segment_reduce: rowptr must be 1-D with rows + 1 entries");
  const at::Tensor x = (x_in.size(1) <= 1 || x_in.stride(1) == 1) ? x_in : x_in.contiguous();
  TorchExec ex(x);
  const Device dev = ex.device();
  const int64_t rows = rowptr.size(0) - 1;
  auto y = empty_output({rows, x.size(1)}, x.options());
  auto arg = ops::has_arg(red) ? empty_output({rows, x.size(1)}, x.options().dtype(at::kLong))
                               : at::empty({0}, x.options().dtype(at::kLong));
  TESSERA_DISPATCH_INDEX(index_type_from(rowptr, "segment_reduce: rowptr"), I, [&] {
    ops::SegmentReduceArgs<I> a;
    a.A = csr_view<I>(rowptr, col, x.size(0), dev, "segment_reduce", uint64_t(graph_id));
    a.reduce = red;
    a.X = dense_view(x, dev, "segment_reduce", "x");
    a.Y = dense_view(y, dev, "segment_reduce", "out");
    a.arg = ops::has_arg(red) ? arg.data_ptr<int64_t>() : nullptr;
    ops::segment_reduce<I>(a, ex.get());
  });
  return {y, arg};
}

at::Tensor segment_reduce_backward_kernel(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& grad_in,
                                          const at::Tensor& arg_in, c10::string_view reduce_name, int64_t num_cols,
                                          int64_t graph_id) {
  const ops::Reduce red = ops::parse_reduce(std::string(reduce_name));
  TESSERA_CHECK(grad_in.dim() == 2, "segment_reduce_backward: grad must be 2-D, got shape ", grad_in.sizes());
  const at::Tensor grad = grad_in.contiguous();
  TorchExec ex(grad);
  const Device dev = ex.device();
  const int64_t F = grad.size(1);
  at::Tensor arg;
  if (ops::has_arg(red)) {
    arg = arg_in.contiguous();
    TESSERA_CHECK(arg.scalar_type() == at::kLong && arg.dim() == 2 && arg.size(0) == grad.size(0) &&
                      arg.size(1) == F && device_from(arg.device()) == dev,
                  "segment_reduce_backward: arg must be int64 [", grad.size(0), ", ", F, "] on ", dev.str(),
                  ", got ", c10::toString(arg.scalar_type()), " ", arg.sizes());
  }
  auto dx = empty_output({num_cols, F}, grad.options());
  TESSERA_DISPATCH_INDEX(index_type_from(rowptr, "segment_reduce_backward: rowptr"), I, [&] {
    ops::SegmentReduceBackwardArgs<I> a;
    a.A = csr_view<I>(rowptr, col, num_cols, dev, "segment_reduce_backward", uint64_t(graph_id));
    a.reduce = red;
    a.dY = dense_view(grad, dev, "segment_reduce_backward", "grad");
    a.arg = arg.defined() ? arg.data_ptr<int64_t>() : nullptr;
    a.dX = dense_view(dx, dev, "segment_reduce_backward", "dx");
    ops::segment_reduce_backward<I>(a, ex.get());
  });
  return dx;
}

at::Tensor segment_reduce_backward(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& grad,
                                   const at::Tensor& arg, const std::string& reduce, int64_t num_cols,
                                   int64_t graph_id) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("tessera::segment_reduce_backward", "")
                       .typed<decltype(segment_reduce_backward_kernel)>();
  return op.call(rowptr, col, grad, arg, reduce, num_cols, graph_id);
}

class SegmentReduceFunction : public torch::autograd::Function<SegmentReduceFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                                                const at::Tensor& rowptr, const at::Tensor& col,
                                                const std::string& reduce, int64_t graph_id) {
    at::AutoDispatchBelowADInplaceOrView below;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("tessera::segment_reduce", "")
                         .typed<decltype(segment_reduce_kernel)>();
    auto [y, arg] = op.call(rowptr, col, x, reduce, graph_id);
    ctx->saved_data["reduce"] = reduce;
    ctx->saved_data["graph_id"] = graph_id;
    ctx->saved_data["num_cols"] = x.size(0);
    ctx->save_for_backward({rowptr, col, arg});
    ctx->mark_non_differentiable({arg});
    return {y, arg};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto dx = segment_reduce_backward(saved[0], saved[1], grads[0], saved[2],
                                            ctx->saved_data["reduce"].toStringRef(),
                                            ctx->saved_data["num_cols"].toInt(), ctx->saved_data["graph_id"].toInt());
    return {dx, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> segment_reduce_autograd(const at::Tensor& rowptr, const at::Tensor& col,
                                                           const at::Tensor& x, c10::string_view reduce,
                                                           int64_t graph_id) {
  if (!needs_grad(x)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return segment_reduce(rowptr, col, x, std::string(reduce), graph_id);
  }
  auto out = SegmentReduceFunction::apply(x, rowptr, col, std::string(reduce), graph_id);
  return {out[0], out[1]};
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> segment_reduce(const at::Tensor& rowptr, const at::Tensor& col,
                                                  const at::Tensor& x, const std::string& reduce, int64_t graph_id) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("tessera::segment_reduce", "")
                       .typed<decltype(segment_reduce_kernel)>();
  return op.call(rowptr, col, x, reduce, graph_id);
}

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("segment_reduce(Tensor rowptr, Tensor col, Tensor x, str reduce, int graph_id=0) -> (Tensor, Tensor)");
  m.def("segment_reduce_backward(Tensor rowptr, Tensor col, Tensor grad, Tensor arg, str reduce, int num_cols, "
        "int graph_id=0) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) {
  m.impl("segment_reduce", TESSERA_TORCH_FN(tessera::pt::segment_reduce_kernel));
  m.impl("segment_reduce_backward", TESSERA_TORCH_FN(tessera::pt::segment_reduce_backward_kernel));
}

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) {
  m.impl("segment_reduce", TESSERA_TORCH_FN(tessera::pt::segment_reduce_kernel));
  m.impl("segment_reduce_backward", TESSERA_TORCH_FN(tessera::pt::segment_reduce_backward_kernel));
}
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) {
  m.impl("segment_reduce", TESSERA_TORCH_FN(tessera::pt::segment_reduce_autograd));
}
