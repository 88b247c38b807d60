// tessera::linear_heads(x, weight, bias, x2, weight2, bias2): per-head projections written side by
// side, plus one projection every head shares:
//   y[:, h C .. (h + 1) C] = x[:, h K .. (h + 1) K] weight[h C .. (h + 1) C]^T + bias_h
//                            + x2 weight2[h C .. (h + 1) C]^T + bias2_h,
// heads H = x's width / weight's in_features K, C = weight's rows / H; x2, weight2, bias2 optional.
// TransformerConv's folded form (python/tessera/nn/transformer.py, src/torch/transformer.cpp): each
// head's K-wide aggregate (a column block of the attention's one output) projected by that head's
// rows of lin_value, with lin_skip(x_dst) as the shared projection.
//
// Why one op: on CUDA fp32 it is one launch of the core's projection with heads and a second input
// (include/tessera/ops/linear.hpp), so the skip costs no pass over the [rows, H C] output of its own:
// on a 2^20-node graph at 8 x 128 a separate skip (tessera::linear with the output as its residual)
// read and wrote that output once more, 4.4 of the folded layer's 15.7 ms (H100,
// bench/results/h100_20261205d). Elsewhere (CPU, other dtypes, shapes the kernel refuses) each head's
// product is written into its column block by the BLAS (addmm_out into a column view) and the shared
// one added over the whole output (addmm_); on the CPU the output is the ops' output memory
// (outputs.hpp: no page faults on its first write).
// Backward, dy's column block h as dy_h: dx_h = dy_h weight_h into dx's block h of one buffer,
// dweight_h = dy_h^T x_h, dbias = dy's column sums; dx2 = dy weight2, dweight2 = dy^T x2, dbias2 =
// dy's column sums (linear_op.hpp's add_input_grad and weight_grads). Under create_graph the heads'
// dx are recorded and concatenated instead.
// weight_split: linear_split_weight(weight, weight2), kept by a caller whose weights have not changed
// since (the folded layer without autograd), so that the kernel launches no split of its own.
#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>

#include <tuple>
#include <vector>

#include "boundary.hpp"
#include "column_sums.hpp"
#include "linear_op.hpp"
#include "needs_grad.hpp"
#include "optional_args.hpp"
#include "outputs.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ops/linear.hpp"
#include "views.hpp"

namespace tessera::pt {

namespace {

// Heads H: x's width over weight's in_features.
int64_t heads_of(const at::Tensor& x, const at::Tensor& weight) { return x.size(1) / weight.size(1); }

void check_args(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& x2,
                const at::Tensor& w2, const at::Tensor& b2) {
  TESSERA_CHECK(x.defined() && x.dim() == 2, "linear_heads: x must be 2-D (rows x heads in_features), got shape ",
                x.defined() ? x.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(w.defined() && w.dim() == 2 && w.size(1) > 0 && x.size(1) % w.size(1) == 0,
                "linear_heads: weight must be [heads out_features, in_features] with x's ", x.size(1),
                " columns a whole number of in_features, got shape ", w.defined() ? w.sizes() : at::IntArrayRef{});
  const int64_t heads = heads_of(x, w), n = w.size(0);
  TESSERA_CHECK(heads >= 1 && n % heads == 0, "linear_heads: weight has ", n, " rows, not a multiple of the ", heads,
                " heads (x's ", x.size(1), " columns over in_features ", w.size(1), ")");
  auto same_kind = [&](const at::Tensor& t, const char* name) {
    TESSERA_CHECK(t.scalar_type() == x.scalar_type() && t.device() == x.device(), "linear_heads: ", name, " is ",
                  t.scalar_type(), " on ", t.device(), " but x is ", x.scalar_type(), " on ", x.device());
  };
  same_kind(w, "weight");
  auto check_bias = [&](const at::Tensor& t, const char* name) {
    if (!t.defined()) return;
    TESSERA_CHECK(t.dim() == 1 && t.size(0) == n, "linear_heads: ", name, " must be [", n, "], got shape ", t.sizes());
    same_kind(t, name);
  };
  check_bias(b, "bias");
  TESSERA_CHECK(x2.defined() == w2.defined(), "linear_heads: x2 and weight2 come together (the shared projection)");
  TESSERA_CHECK(!b2.defined() || x2.defined(), "linear_heads: bias2 without x2 and weight2");
  if (x2.defined()) {
    TESSERA_CHECK(x2.dim() == 2 && x2.size(0) == x.size(0), "linear_heads: x2 must be 2-D with x's ", x.size(0),
                  " rows, got shape ", x2.sizes());
    TESSERA_CHECK(w2.dim() == 2 && w2.size(0) == n && w2.size(1) == x2.size(1), "linear_heads: weight2 must be [", n,
                  ", ", x2.size(1), "], got shape ", w2.sizes());
    same_kind(x2, "x2");
    same_kind(w2, "weight2");
    check_bias(b2, "bias2");
  }
}

// The whole product as one launch of the core's projection (CUDA fp32, where a variant takes heads
// and a second input); false, writing nothing, otherwise.
bool heads_into(const at::Tensor& y, const at::Tensor& x_in, const at::Tensor& w_in, const at::Tensor& b,
                const at::Tensor& x2_in, const at::Tensor& w2_in, const at::Tensor& b2, const at::Tensor& w_split) {
  if (!x_in.is_cuda() || x_in.scalar_type() != at::kFloat) return false;
  const at::Tensor x = x_in.stride(1) == 1 ? x_in : x_in.contiguous();
  const at::Tensor w = w_in.contiguous();
  TorchExec ex(x);
  const Device dev = ex.device();
  ops::LinearArgs a;
  a.X = dense_view(x, dev, "linear_heads", "x");
  a.W = dense_view(w, dev, "linear_heads", "weight");
  a.Y = dense_view(y, dev, "linear_heads", "y");
  a.blocks = heads_of(x, w);
  at::Tensor x2, w2;
  if (x2_in.defined() && x2_in.size(1) > 0) {
    x2 = x2_in.stride(1) == 1 ? x2_in : x2_in.contiguous();
    w2 = w2_in.contiguous();
    a.X2 = dense_view(x2, dev, "linear_heads", "x2");
    a.W2 = dense_view(w2, dev, "linear_heads", "weight2");
  }
  // One bias for the kernel: the two summed (a [N] add) when both are given.
  at::Tensor bias = b.defined() && b2.defined() ? b + b2 : b.defined() ? b : b2;
  if (bias.defined()) {
    bias = bias.contiguous();
    a.bias = bias.data_ptr();
  }
  attach_weight_split(a, w_split, x, "linear_heads");  // linear_split_weight(weight, weight2)
  if (!ops::linear_supported(a, ex.get())) return false;
  ops::linear(a, ex.get());
  return true;
}

at::Tensor forward_impl(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& x2,
                        const at::Tensor& w2, const at::Tensor& b2, const at::Tensor& w_split) {
  const at::TensorOptions opts = x.options();
  at::Tensor y = x.is_cpu() ? empty_output({x.size(0), w.size(0)}, opts) : at::empty({x.size(0), w.size(0)}, opts);
  if (heads_into(y, x, w, b, x2, w2, b2, w_split)) return y;
  const int64_t heads = heads_of(x, w), k = w.size(1), c = w.size(0) / heads;
  for (int64_t h = 0; h < heads; ++h) {
    at::Tensor block = y.narrow(1, h * c, c);
    const at::Tensor xh = x.narrow(1, h * k, k), wh = w.narrow(0, h * c, c);
    const at::Tensor bh = b.defined() ? b.narrow(0, h * c, c) : at::Tensor();
    if (linear_into(block, xh, wh, bh, {})) continue;
    if (bh.defined()) at::addmm_out(block, bh, xh, wh.t());
    else at::mm_out(block, xh, wh.t());
  }
  if (x2.defined() && !linear_into(y, x2, w2, b2, y)) {  // y += x2 weight2^T + bias2
    y.addmm_(x2, w2.t());
    if (b2.defined()) y.add_(b2);
  }
  return y;
}

at::Tensor linear_heads_kernel(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias,
                               const OptTensor& x2, const OptTensor& weight2, const OptTensor& bias2,
                               const OptTensor& weight_split) {
  const at::Tensor b = or_undefined(bias), x2t = or_undefined(x2), w2 = or_undefined(weight2), b2 = or_undefined(bias2);
  check_args(x, weight, b, x2t, w2, b2);
  return forward_impl(x, weight, b, x2t, w2, b2, or_undefined(weight_split));
}

at::Tensor call_linear_heads(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias, const OptTensor& x2,
                             const OptTensor& weight2, const OptTensor& bias2, const OptTensor& weight_split = {}) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("tessera::linear_heads", "")
                       .typed<decltype(linear_heads_kernel)>();
  return op.call(x, weight, bias, x2, weight2, bias2, weight_split);
}

bool wants(const OptTensor& t) { return t.has_value() && t->defined() && t->requires_grad(); }

class LinearHeadsFunction : public torch::autograd::Function<LinearHeadsFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const OptTensor& bias, const OptTensor& x2, const OptTensor& weight2,
                            const OptTensor& bias2, const OptTensor& weight_split) {
    at::AutoDispatchBelowADInplaceOrView below;
    ctx->saved_data["grads"] = c10::List<bool>({wants(bias), wants(x2), wants(weight2), wants(bias2)});
    ctx->save_for_backward({x, weight, or_undefined(x2), or_undefined(weight2)});
    return call_linear_heads(x, weight, bias, x2, weight2, bias2, weight_split);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &x2 = saved[2], &w2 = saved[3];
    const c10::List<bool> want = ctx->saved_data["grads"].toBoolList();
    const bool want_b = want.get(0), want_x2 = want.get(1), want_w2 = want.get(2), want_b2 = want.get(3);
    const at::Tensor& dy = grads[0];  // defined: the node's one output's gradient is materialized
    const int64_t heads = heads_of(x, w), k = w.size(1), c = w.size(0) / heads;
    const bool recorded = c10::GradMode::is_enabled();  // create_graph: ops autograd records
    // The parameter gradients first (as in linear_op.cpp): their scratch is freed before dx exists.
    at::Tensor dw, db, dx, dx2, dw2, db2;
    std::vector<at::Tensor> dxs;
    if (ctx->needs_input_grad(1)) {  // dw_h = dy_h^T x_h, stacked as the weight's row blocks
      std::vector<at::Tensor> dws;
      for (int64_t h = 0; h < heads; ++h)
        dws.push_back(weight_grads(dy.narrow(1, h * c, c), x.narrow(1, h * k, k), true, false).first);
      dw = heads == 1 ? dws[0] : at::cat(dws, 0);
    }
    // bias and bias2 both get dy's column sums: one pass (with dw2's when x2 is there), and a copy
    // when both want them (two parameters' gradients must not share storage).
    at::Tensor sums;
    if (x2.defined()) std::tie(dw2, sums) = weight_grads(dy, x2, want_w2, want_b || want_b2);
    else if (want_b) sums = column_sums(dy, dy.scalar_type());
    if (want_b) db = sums;
    if (want_b2) db2 = want_b ? sums.clone() : sums;
    if (ctx->needs_input_grad(0)) {
      if (!recorded) dx = x.is_cpu() ? empty_output(x.sizes(), dy.options()) : at::empty(x.sizes(), dy.options());
      for (int64_t h = 0; h < heads; ++h) {
        const at::Tensor dy_h = dy.narrow(1, h * c, c), w_h = w.narrow(0, h * c, c);
        if (recorded) {
          dxs.push_back(dy_h.mm(w_h));
          continue;
        }
        at::Tensor block = dx.narrow(1, h * k, k);
        if (!linear_into(block, dy_h, w_h, {}, {}, /*w_transposed=*/true)) at::mm_out(block, dy_h, w_h);
      }
      if (recorded) dx = heads == 1 ? dxs[0] : at::cat(dxs, 1);
    }
    if (want_x2) dx2 = add_input_grad({}, dy, w2);
    return {dx, dw, db, dx2, dw2, db2, at::Tensor()};
  }
};

at::Tensor linear_heads_autograd(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias,
                                 const OptTensor& x2, const OptTensor& weight2, const OptTensor& bias2,
                                 const OptTensor& weight_split) {
  check_args(x, weight, or_undefined(bias), or_undefined(x2), or_undefined(weight2), or_undefined(bias2));
  if (!needs_grad(x, weight, bias, x2, weight2, bias2)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linear_heads(x, weight, bias, x2, weight2, bias2, weight_split);
  }
  return LinearHeadsFunction::apply(x, weight, bias, x2, weight2, bias2, weight_split);
}

}  // namespace

at::Tensor linear_heads(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& x2,
                        const at::Tensor& weight2, const at::Tensor& bias2, const at::Tensor& weight_split) {
  auto opt = [](const at::Tensor& t) { return t.defined() ? OptTensor(t) : OptTensor(); };
  return call_linear_heads(x, weight, opt(bias), opt(x2), opt(weight2), opt(bias2), opt(weight_split));
}

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("linear_heads(Tensor x, Tensor weight, Tensor? bias=None, Tensor? x2=None, Tensor? weight2=None, "
        "Tensor? bias2=None, Tensor? weight_split=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) { m.impl("linear_heads", TESSERA_TORCH_FN(tessera::pt::linear_heads_kernel)); }

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) { m.impl("linear_heads", TESSERA_TORCH_FN(tessera::pt::linear_heads_kernel)); }
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) {
  m.impl("linear_heads", TESSERA_TORCH_FN(tessera::pt::linear_heads_autograd));
}
