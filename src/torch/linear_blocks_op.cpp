// tessera::linear_blocks(xs, weights, biases) = cat([xs[i] weights[i]^T + biases[i] for each i], 1):
// projections of different inputs written as the column blocks of one output, without the
// concatenation. TransformerConv's folded form (python/tessera/nn/transformer.py) projects each
// head's aggregate with that head's rows of lin_value into its block of the layer's output.
//
// Why one op: on the CPU, a fresh [rows, width] tensor of tens of MB is faulted in page by page on
// its first write (outputs.hpp). On the 2-core development machine the concatenation of two
// [16384, 256] head outputs took 53 ms, the folded layer's largest cost. Here the output is the
// ops' output memory, and each product is written into its block by the BLAS (addmm_out into a
// column view: row-major with the buffer's row stride). On CUDA fp32 each block is written by
// tessera's tf32x3 kernel (linear_into), as tessera::linears writes its blocks.
// Backward: for each block i, dx_i = dy_i w_i, dw_i = dy_i^T x_i, db_i = column sums of dy_i
// (linear_op.hpp's add_input_grad and weight_grads), dy_i the gradient's column block.
#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <vector>

#include "bias_list.hpp"
#include "boundary.hpp"
#include "linear_op.hpp"
#include "needs_grad.hpp"
#include "outputs.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

namespace {

void check_args(at::TensorList xs, at::TensorList weights, const std::vector<at::Tensor>& biases) {
  TESSERA_CHECK(!xs.empty(), "linear_blocks: no inputs given");
  TESSERA_CHECK(weights.size() == xs.size() && biases.size() == xs.size(), "linear_blocks: ", xs.size(),
                " inputs, ", weights.size(), " weights and ", biases.size(),
                " biases (one of each per block; None for a block without a bias)");
  const at::Tensor& x0 = xs[0];
  for (size_t i = 0; i < xs.size(); ++i) {
    const at::Tensor &x = xs[i], &w = weights[i], &b = biases[i];
    TESSERA_CHECK(x.defined() && x.dim() == 2 && x.size(0) == x0.size(0), "linear_blocks: input ", i,
                  " must be 2-D with ", x0.size(0), " rows, got shape ", x.defined() ? x.sizes() : at::IntArrayRef{});
    TESSERA_CHECK(w.defined() && w.dim() == 2 && w.size(1) == x.size(1), "linear_blocks: weight ", i,
                  " must be [out_features, ", x.size(1), "], got shape ", w.defined() ? w.sizes() : at::IntArrayRef{});
    TESSERA_CHECK(x.scalar_type() == x0.scalar_type() && w.scalar_type() == x0.scalar_type() &&
                      x.device() == x0.device() && w.device() == x0.device(),
                  "linear_blocks: input ", i, " is ", x.scalar_type(), " on ", x.device(), " and its weight ",
                  w.scalar_type(), " on ", w.device(), ", but input 0 is ", x0.scalar_type(), " on ", x0.device());
    if (b.defined())
      TESSERA_CHECK(b.dim() == 1 && b.size(0) == w.size(0) && b.scalar_type() == w.scalar_type() &&
                        b.device() == w.device(),
                    "linear_blocks: bias ", i, " must be a [", w.size(0), "] ", w.scalar_type(), " tensor on ",
                    w.device(), ", got ", b.sizes(), " ", b.scalar_type(), " on ", b.device());
  }
}

// The output's column blocks, as views of y.
std::vector<at::Tensor> blocks_of(const at::Tensor& y, at::TensorList weights) {
  std::vector<at::Tensor> blocks;
  int64_t col = 0;
  for (const at::Tensor& w : weights) {
    blocks.push_back(y.narrow(1, col, w.size(0)));
    col += w.size(0);
  }
  return blocks;
}

at::Tensor forward_impl(at::TensorList xs, at::TensorList weights, const std::vector<at::Tensor>& biases) {
  int64_t width = 0;
  for (const at::Tensor& w : weights) width += w.size(0);
  const at::TensorOptions opts = xs[0].options();
  at::Tensor y = xs[0].is_cpu() ? empty_output({xs[0].size(0), width}, opts) : at::empty({xs[0].size(0), width}, opts);
  const std::vector<at::Tensor> blocks = blocks_of(y, weights);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (linear_into(blocks[i], xs[i], weights[i], biases[i], {})) continue;
    at::Tensor block = blocks[i];
    const at::Tensor wt = weights[i].t();
    if (biases[i].defined()) at::addmm_out(block, biases[i], xs[i], wt);
    else at::mm_out(block, xs[i], wt);
  }
  return y;
}

at::Tensor linear_blocks_kernel(at::TensorList xs, at::TensorList weights, const OptTensorList& biases) {
  const std::vector<at::Tensor> bs = to_vector(biases);
  check_args(xs, weights, bs);
  return forward_impl(xs, weights, bs);
}

}  // namespace

at::Tensor call_linear_blocks(at::TensorList xs, at::TensorList weights, const std::vector<at::Tensor>& bs) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("tessera::linear_blocks", "")
                       .typed<at::Tensor(at::TensorList, at::TensorList, const OptTensorList&)>();
  return op.call(xs, weights, to_optional_list(bs));
}

namespace {

// Inputs: the k inputs, the k weights, the biases that exist (autograd takes no undefined tensor
// as an input), and which blocks have them.
class LinearBlocksFunction : public torch::autograd::Function<LinearBlocksFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList xs, at::TensorList weights,
                            at::TensorList biases, const c10::List<bool>& has_bias) {
    at::AutoDispatchBelowADInplaceOrView below;
    std::vector<at::Tensor> saved(xs.begin(), xs.end());
    saved.insert(saved.end(), weights.begin(), weights.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["has_bias"] = has_bias;
    return call_linear_blocks(xs, weights, all_biases(biases, has_bias));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const size_t k = saved.size() / 2;
    const c10::List<bool> has_bias = ctx->saved_data["has_bias"].toBoolList();
    const at::Tensor& dy = grads[0];  // defined: the node's one output's gradient is materialized
    size_t n_biases = 0;
    for (size_t i = 0; i < k; ++i) n_biases += has_bias.get(i);
    // The inputs' gradients, the weights', the existing biases', and none for has_bias.
    torch::autograd::variable_list out(2 * k + n_biases + 1);
    size_t bias_slot = 2 * k;
    int64_t col = 0;
    for (size_t i = 0; i < k; ++i) {
      const at::Tensor& x = saved[i];
      const at::Tensor& w = saved[k + i];
      const bool want_b = has_bias.get(i) && ctx->needs_input_grad(bias_slot);
      const at::Tensor dy_i = dy.narrow(1, col, w.size(0));
      // Parameter gradients before dx (as in linear_op.cpp): their scratch is freed first.
      auto [dw, db] = weight_grads(dy_i, x, ctx->needs_input_grad(k + i), want_b);
      out[k + i] = dw;
      if (want_b) out[bias_slot] = db;
      if (ctx->needs_input_grad(i)) out[i] = add_input_grad({}, dy_i, w);
      col += w.size(0);
      if (has_bias.get(i)) ++bias_slot;
    }
    return out;
  }
};

at::Tensor linear_blocks_autograd(at::TensorList xs, at::TensorList weights, const OptTensorList& biases) {
  const std::vector<at::Tensor> bs = to_vector(biases);
  check_args(xs, weights, bs);
  bool grad = false;
  for (size_t i = 0; i < xs.size(); ++i) grad = grad || needs_grad(xs[i], weights[i], bs[i]);
  if (!grad) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linear_blocks(xs, weights, bs);
  }
  const PresentBiases p = present_biases(bs);
  return LinearBlocksFunction::apply(xs, weights, at::TensorList(p.present), p.has_bias);
}

}  // namespace

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("linear_blocks(Tensor[] xs, Tensor[] weights, Tensor?[] biases) -> Tensor");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) { m.impl("linear_blocks", TESSERA_TORCH_FN(tessera::pt::linear_blocks_kernel)); }

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) { m.impl("linear_blocks", TESSERA_TORCH_FN(tessera::pt::linear_blocks_kernel)); }
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) {
  m.impl("linear_blocks", TESSERA_TORCH_FN(tessera::pt::linear_blocks_autograd));
}
