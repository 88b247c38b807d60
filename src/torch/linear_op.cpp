// tessera::linear(x, weight, bias, residual) = x weight^T + bias (+ residual),
// torch.nn.functional.linear's contract for 2-D x, with an optional [rows, out_features] residual
// added in the same pass (a layer's skip projection plus the attention output: one kernel and
// no projection buffer instead of a projection and an add). CUDA fp32 runs the core's tf32x3
// tensor-core kernel (include/tessera/ops/linear.hpp) when a variant is eligible; everything else
// (CPU, other dtypes, ineligible shapes) is at::linear, plus the residual.
// Backward: dx = dy weight on the same kernel, reading the weight as stored (LinearArgs::w_transposed),
// dweight = dy^T x, dbias = column sums, dresidual = dy.
// weight_split: the weight as the wgmma kernels read it, from tessera::linear_split_weight(weight)
// (an empty tensor where none reads one). A caller whose weight does not change between calls
// (the Python layers without autograd) keeps it, and the kernel then launches no split of its own.
// It is the caller's promise that it was made from this weight's current values.
// The Python layers call it for fp32 CUDA Linears when torch's float32 matmul precision is
// "highest" (a user who allows TF32 gets cuBLAS's TF32 through the Linear itself).
#include "boundary.hpp"

#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>

#include <tuple>

#include "column_sums.hpp"
#include "linear_op.hpp"
#include "needs_grad.hpp"
#include "optional_args.hpp"
#include "outputs.hpp"
#include "tessera/ops/linear.hpp"
#include "views.hpp"

namespace tessera::pt {

namespace {
// Whether the tf32x3 kernel could take these: CUDA float32 throughout (the shapes it checks itself).
bool cuda_f32(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return x.is_cuda() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
         (!bias.defined() || bias.scalar_type() == at::kFloat);
}
}  // namespace

bool linear_into(const at::Tensor& y, const at::Tensor& x_in, const at::Tensor& weight_in, const at::Tensor& bias,
                 const at::Tensor& residual, bool w_transposed, const at::Tensor& w_split) {
  if (!cuda_f32(x_in, weight_in, bias)) return false;
  const at::Tensor x = x_in.stride(1) == 1 ? x_in : x_in.contiguous();
  const at::Tensor w = weight_in.is_contiguous() ? weight_in : weight_in.contiguous();
  const at::Tensor b = bias.defined() ? bias.contiguous() : at::Tensor();
  TorchExec ex(x);
  const Device dev = ex.device();
  ops::LinearArgs a;
  a.w_transposed = w_transposed;
  a.X = dense_view(x, dev, "linear", "x");
  a.W = dense_view(w, dev, "linear", "weight");
  a.Y = dense_view(y, dev, "linear", "y");
  if (b.defined()) {
    TESSERA_CHECK(b.device() == x.device(), "linear: bias on ", b.device(), " but x on ", x.device());
    a.bias = b.data_ptr();
  }
  at::Tensor r;
  if (residual.defined()) {
    r = residual.stride(1) == 1 ? residual : residual.contiguous();
    a.R = dense_view(r, dev, "linear", "residual");
  }
  attach_weight_split(a, w_split, x, "linear");
  if (!ops::linear_supported(a, ex.get())) return false;
  ops::linear(a, ex.get());
  return true;
}

void attach_weight_split(ops::LinearArgs& a, const at::Tensor& w_split, const at::Tensor& x, const char* op) {
  if (!w_split.defined() || w_split.numel() == 0) return;
  TESSERA_CHECK(w_split.device() == x.device() && w_split.scalar_type() == at::kFloat && w_split.dim() == 1 &&
                    w_split.is_contiguous(),
                op, ": weight_split must be what linear_split_weight returned for its weights (a 1-D float32 tensor "
                "on x's device), got ", w_split.scalar_type(), " ", w_split.sizes(), " on ", w_split.device());
  a.w_split = w_split.data_ptr();
  a.w_split_bytes = size_t(w_split.numel()) * sizeof(float);
}

at::Tensor add_input_grad(at::Tensor dx, const at::Tensor& dy, const at::Tensor& weight) {
  const bool first = !dx.defined();
  if (c10::GradMode::is_enabled()) return first ? dy.mm(weight) : dx + dy.mm(weight);  // create_graph
  if (first) dx = empty_output({dy.size(0), weight.size(1)}, dy.options());
  if (linear_into(dx, dy, weight, {}, first ? at::Tensor() : dx, /*w_transposed=*/true)) return dx;
  return first ? at::mm_out(dx, dy, weight) : dx.addmm_(dy, weight);
}

std::pair<at::Tensor, at::Tensor> weight_grads(const at::Tensor& dy, const at::Tensor& x, bool want_w, bool want_b) {
  if (want_w && !c10::GradMode::is_enabled() && dy.is_cuda() && dy.scalar_type() == at::kFloat &&
      x.scalar_type() == at::kFloat && dy.dim() == 2 && x.dim() == 2 && dy.stride(1) == 1 && x.stride(1) == 1) {
    TorchExec ex(x);
    const Device dev = ex.device();
    at::Tensor dw = at::empty({dy.size(1), x.size(1)}, dy.options());
    at::Tensor db = want_b ? at::empty({dy.size(1)}, dy.options()) : at::Tensor();
    ops::LinearGradArgs a{dense_view(dy, dev, "linear backward", "dy"), dense_view(x, dev, "linear backward", "x"),
                          dense_view(dw, dev, "linear backward", "dw"), want_b ? db.data_ptr() : nullptr};
    if (ops::linear_weight_grad_supported(a, ex.get())) {
      ops::linear_weight_grad(a, ex.get());
      return {dw, db};
    }
  }
  return {want_w ? dy.t().mm(x) : at::Tensor(), want_b ? column_sums(dy, dy.scalar_type()) : at::Tensor()};
}

namespace {

void check_args(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias, const OptTensor& residual) {
  TESSERA_CHECK(x.defined() && x.dim() == 2, "linear: x must be 2-D (rows x in_features), got shape ",
                x.defined() ? x.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(weight.defined() && weight.dim() == 2 && weight.size(1) == x.size(1),
                "linear: weight must be [out_features, ", x.size(1), "], got shape ", weight.sizes());
  if (has(bias))
    TESSERA_CHECK(bias->dim() == 1 && bias->size(0) == weight.size(0), "linear: bias must be [", weight.size(0),
                  "], got shape ", bias->sizes());
  if (has(residual)) {
    TESSERA_CHECK(residual->dim() == 2 && residual->size(0) == x.size(0) && residual->size(1) == weight.size(0),
                  "linear: residual must be [", x.size(0), ", ", weight.size(0), "] (rows x out_features), got shape ",
                  residual->sizes());
    TESSERA_CHECK(residual->scalar_type() == x.scalar_type() && residual->device() == x.device(),
                  "linear: residual is ", residual->scalar_type(), " on ", residual->device(), " but x is ",
                  x.scalar_type(), " on ", x.device());
  }
}

// torch's Linear, then the residual added into its fresh output (the same two roundings).
at::Tensor torch_linear(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias,
                        const OptTensor& residual) {
  at::Tensor y = at::linear(x, weight, bias);
  return has(residual) ? y.add_(*residual) : y;
}

at::Tensor linear_kernel(const at::Tensor& x_in, const at::Tensor& weight_in, const OptTensor& bias,
                         const OptTensor& residual, const OptTensor& weight_split) {
  check_args(x_in, weight_in, bias, residual);
  const at::Tensor b = has(bias) ? *bias : at::Tensor();
  if (!cuda_f32(x_in, weight_in, b)) return torch_linear(x_in, weight_in, bias, residual);  // no output to make
  auto y = at::empty({x_in.size(0), weight_in.size(0)}, x_in.options());
  if (!linear_into(y, x_in, weight_in, b, has(residual) ? *residual : at::Tensor(), false,
                   has(weight_split) ? *weight_split : at::Tensor()))
    return torch_linear(x_in, weight_in, bias, residual);
  return y;
}

}  // namespace

at::Tensor call_linear(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias, const OptTensor& residual,
                       const OptTensor& weight_split) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("tessera::linear", "").typed<decltype(linear_kernel)>();
  return op.call(x, weight, bias, residual, weight_split);
}

namespace {

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const OptTensor& bias, const OptTensor& residual, const OptTensor& weight_split) {
    at::AutoDispatchBelowADInplaceOrView below;
    ctx->saved_data["bias_grad"] = has(bias) && bias->requires_grad();
    ctx->saved_data["residual_grad"] = has(residual) && residual->requires_grad();
    ctx->save_for_backward({x, weight});
    return call_linear(x, weight, bias, residual, weight_split);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& dy = grads[0];
    // The parameter gradients first: their scratch (the weight-gradient pass's partial tiles) is
    // freed before dx is allocated, so the two never add up in the step's peak memory.
    at::Tensor dx, dw, db;
    std::tie(dw, db) = weight_grads(dy, x, ctx->needs_input_grad(1), ctx->saved_data["bias_grad"].toBool());
    if (ctx->needs_input_grad(0)) dx = add_input_grad({}, dy, weight);
    const at::Tensor dr = ctx->saved_data["residual_grad"].toBool() ? dy : at::Tensor();
    return {dx, dw, db, dr, at::Tensor()};
  }
};

at::Tensor linear_autograd(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias,
                           const OptTensor& residual, const OptTensor& weight_split) {
  check_args(x, weight, bias, residual);
  if (!needs_grad(x, weight, bias, residual)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linear(x, weight, bias, residual, weight_split);
  }
  return LinearFunction::apply(x, weight, bias, residual, weight_split);
}

// tessera::linear_split_weight: the weight's split for weight_split (ops::linear_split_weight), with
// weight2 the second input's weight of a tessera::linear_heads call, or an empty tensor where no
// kernel reads one (CPU, other dtypes, other devices). No autograd: the split is a copy the caller
// keeps while the weights are unchanged.
at::Tensor linear_split_weight_kernel(const at::Tensor& weight_in, const OptTensor& weight2_in) {
  TESSERA_CHECK(weight_in.defined() && weight_in.dim() == 2, "linear_split_weight: weight must be 2-D "
                "[out_features, in_features], got shape ", weight_in.defined() ? weight_in.sizes() : at::IntArrayRef{});
  const bool two = has(weight2_in);
  if (two)
    TESSERA_CHECK(weight2_in->dim() == 2 && weight2_in->size(0) == weight_in.size(0) &&
                      weight2_in->scalar_type() == weight_in.scalar_type() && weight2_in->device() == weight_in.device(),
                  "linear_split_weight: weight2 must be [", weight_in.size(0), ", in_features2] ",
                  weight_in.scalar_type(), " on ", weight_in.device(), ", got ", weight2_in->sizes(), " ",
                  weight2_in->scalar_type(), " on ", weight2_in->device());
  if (!weight_in.is_cuda() || weight_in.scalar_type() != at::kFloat) return at::empty({0}, weight_in.options());
  const at::Tensor w = weight_in.contiguous(), w2 = two ? weight2_in->contiguous() : at::Tensor();
  TorchExec ex(w);
  const DenseView wv = dense_view(w, ex.device(), "linear_split_weight", "weight");
  const DenseView w2v = two ? dense_view(w2, ex.device(), "linear_split_weight", "weight2") : DenseView{};
  const size_t bytes = ops::linear_split_weight_bytes(wv, w2v);
  at::Tensor out = at::empty({int64_t(bytes / sizeof(float))}, w.options());
  if (bytes > 0) ops::linear_split_weight(wv, w2v, out.data_ptr(), bytes, ex.get());
  return out;
}

}  // namespace

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("linear(Tensor x, Tensor weight, Tensor? bias=None, Tensor? residual=None, Tensor? weight_split=None) -> Tensor");
  m.def("linear_split_weight(Tensor weight, Tensor? weight2=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) {
  m.impl("linear", TESSERA_TORCH_FN(tessera::pt::linear_kernel));
  m.impl("linear_split_weight", TESSERA_TORCH_FN(tessera::pt::linear_split_weight_kernel));
}

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) {
  m.impl("linear", TESSERA_TORCH_FN(tessera::pt::linear_kernel));
  m.impl("linear_split_weight", TESSERA_TORCH_FN(tessera::pt::linear_split_weight_kernel));
}
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) { m.impl("linear", TESSERA_TORCH_FN(tessera::pt::linear_autograd)); }
