// tessera::linear(x, weight, bias) = x weight^T + bias, torch.nn.functional.linear's contract for
// 2-D x. CUDA fp32 runs the core's tf32x3 tensor-core kernel (include/tessera/ops/linear.hpp) when
// a variant is eligible; everything else (CPU, other dtypes, ineligible shapes) is at::linear.
// Backward: dx = dy weight through this op again (so it runs on the same kernel, the transposed
// weight made contiguous: [out, in] -> [in, out], small), dweight = dy^T x, dbias = column sums.
// The Python layers call it for fp32 CUDA Linears when torch's float32 matmul precision is
// "highest" (a user who allows TF32 gets cuBLAS's TF32 through the Linear itself).
#include "boundary.hpp"

#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include "needs_grad.hpp"
#include "tessera/ops/linear.hpp"
#include "views.hpp"

namespace tessera::pt {

namespace {

using OptTensor = c10::optional<at::Tensor>;

bool has(const OptTensor& t) { return t.has_value() && t->defined(); }

void check_args(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias) {
  TESSERA_CHECK(x.defined() && x.dim() == 2, "linear: x must be 2-D (rows x in_features), got shape ",
                x.defined() ? x.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(weight.defined() && weight.dim() == 2 && weight.size(1) == x.size(1),
                "linear: weight must be [out_features, ", x.size(1), "], got shape ", weight.sizes());
  if (has(bias))
    TESSERA_CHECK(bias->dim() == 1 && bias->size(0) == weight.size(0), "linear: bias must be [", weight.size(0),
                  "], got shape ", bias->sizes());
}

at::Tensor linear_kernel(const at::Tensor& x_in, const at::Tensor& weight_in, const OptTensor& bias) {
  check_args(x_in, weight_in, bias);
  if (!x_in.is_cuda() || x_in.scalar_type() != at::kFloat || weight_in.scalar_type() != at::kFloat ||
      (has(bias) && bias->scalar_type() != at::kFloat))
    return at::linear(x_in, weight_in, bias);
  const at::Tensor x = x_in.stride(1) == 1 ? x_in : x_in.contiguous();
  const at::Tensor w = weight_in.is_contiguous() ? weight_in : weight_in.contiguous();
  const at::Tensor b = has(bias) ? bias->contiguous() : at::Tensor();
  TorchExec ex(x);
  const Device dev = ex.device();
  auto y = at::empty({x.size(0), w.size(0)}, x.options());
  ops::LinearArgs a;
  a.X = dense_view(x, dev, "linear", "x");
  a.W = dense_view(w, dev, "linear", "weight");
  a.Y = dense_view(y, dev, "linear", "y");
  if (b.defined()) {
    TESSERA_CHECK(b.device() == x.device(), "linear: bias on ", b.device(), " but x on ", x.device());
    a.bias = b.data_ptr();
  }
  if (!ops::linear_supported(a, ex.get())) return at::linear(x_in, weight_in, bias);
  ops::linear(a, ex.get());
  return y;
}

at::Tensor call_linear(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("tessera::linear", "").typed<decltype(linear_kernel)>();
  return op.call(x, weight, bias);
}

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const OptTensor& bias) {
    at::AutoDispatchBelowADInplaceOrView below;
    ctx->saved_data["bias_grad"] = has(bias) && bias->requires_grad();
    ctx->save_for_backward({x, weight});
    return call_linear(x, weight, bias);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& dy = grads[0];
    at::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = call_linear(dy, weight.t().contiguous(), {});
    if (ctx->needs_input_grad(1)) dw = dy.t().mm(x);
    if (ctx->saved_data["bias_grad"].toBool()) db = dy.sum(0);
    return {dx, dw, db};
  }
};

at::Tensor linear_autograd(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias) {
  check_args(x, weight, bias);
  if (!needs_grad(x, weight, bias)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linear(x, weight, bias);
  }
  return LinearFunction::apply(x, weight, bias);
}

}  // namespace

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("linear(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) { m.impl("linear", TESSERA_TORCH_FN(tessera::pt::linear_kernel)); }

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) { m.impl("linear", TESSERA_TORCH_FN(tessera::pt::linear_kernel)); }
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) { m.impl("linear", TESSERA_TORCH_FN(tessera::pt::linear_autograd)); }
