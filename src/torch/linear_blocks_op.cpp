// tessera::linear_blocks(xs, weights, biases) = cat([xs[i] weights[i]^T + biases[i] for each i], 1):
// projections of different inputs written as the column blocks of one output, without the
// concatenation. With one input and several weights, the input's consecutive column blocks (each
// as wide as its weight's in_features) are the blocks' inputs: a block-diagonal product.
// TransformerConv's folded form (python/tessera/nn/transformer.py) projects each head's aggregate
// (a column block of the attention's one output) with that head's rows of lin_value into its block
// of the layer's output; its backward writes the input gradient's blocks into one buffer.
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

// One input for several weights: its column blocks are the blocks' inputs.
bool split_input(at::TensorList xs, at::TensorList weights) { return xs.size() == 1 && weights.size() > 1; }

// The blocks' inputs: xs, or the column blocks of its one input.
std::vector<at::Tensor> block_inputs(at::TensorList xs, at::TensorList weights) {
  if (!split_input(xs, weights)) return xs.vec();
  std::vector<at::Tensor> in;
  int64_t col = 0;
  for (const at::Tensor& w : weights) {
    in.push_back(xs[0].narrow(1, col, w.size(1)));
    col += w.size(1);
  }
  return in;
}

void check_args(at::TensorList xs, at::TensorList weights, const std::vector<at::Tensor>& biases) {
  TESSERA_CHECK(!xs.empty(), "linear_blocks: no inputs given");
  TESSERA_CHECK((weights.size() == xs.size() || split_input(xs, weights)) && biases.size() == weights.size(),
                "linear_blocks: ", xs.size(), " inputs, ", weights.size(), " weights and ", biases.size(),
                " biases (one of each per block, or one input split among the weights; None for a block without "
                "a bias)");
  if (split_input(xs, weights)) {
    int64_t width = 0;
    for (const at::Tensor& w : weights) {
      TESSERA_CHECK(w.defined() && w.dim() == 2, "linear_blocks: every weight must be 2-D [out_features, in_features]");
      width += w.size(1);
    }
    TESSERA_CHECK(xs[0].defined() && xs[0].dim() == 2 && xs[0].size(1) == width, "linear_blocks: one input for ",
                  weights.size(), " weights must be 2-D with their in_features summed (", width, ") as columns, got ",
                  xs[0].defined() ? xs[0].sizes() : at::IntArrayRef{});
  }
  const std::vector<at::Tensor> in = block_inputs(xs, weights);
  const at::Tensor& x0 = in[0];
  for (size_t i = 0; i < in.size(); ++i) {
    const at::Tensor &x = in[i], &w = weights[i], &b = biases[i];
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
  const std::vector<at::Tensor> blocks = blocks_of(y, weights), in = block_inputs(xs, weights);
  for (size_t i = 0; i < in.size(); ++i) {
    if (linear_into(blocks[i], in[i], weights[i], biases[i], {})) continue;
    at::Tensor block = blocks[i];
    const at::Tensor wt = weights[i].t();
    if (biases[i].defined()) at::addmm_out(block, biases[i], in[i], wt);
    else at::mm_out(block, in[i], wt);
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

// Inputs: the inputs (k, or one split among the k weights), the k weights, the biases that exist
// (autograd takes no undefined tensor as an input), and which blocks have them.
class LinearBlocksFunction : public torch::autograd::Function<LinearBlocksFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList xs, at::TensorList weights,
                            at::TensorList biases, const c10::List<bool>& has_bias) {
    at::AutoDispatchBelowADInplaceOrView below;
    std::vector<at::Tensor> saved(xs.begin(), xs.end());
    saved.insert(saved.end(), weights.begin(), weights.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["has_bias"] = has_bias;
    ctx->saved_data["inputs"] = int64_t(xs.size());
    return call_linear_blocks(xs, weights, all_biases(biases, has_bias));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const size_t nx = size_t(ctx->saved_data["inputs"].toInt()), k = saved.size() - nx;
    const std::vector<at::Tensor> xs(saved.begin(), saved.begin() + nx), weights(saved.begin() + nx, saved.end());
    const std::vector<at::Tensor> in = block_inputs(xs, weights);
    const c10::List<bool> has_bias = ctx->saved_data["has_bias"].toBoolList();
    const at::Tensor& dy = grads[0];  // defined: the node's one output's gradient is materialized
    size_t n_biases = 0;
    for (size_t i = 0; i < k; ++i) n_biases += has_bias.get(i);
    // The inputs' gradients, the weights', the existing biases', and none for has_bias.
    torch::autograd::variable_list out(nx + k + n_biases + 1);
    // A split input's gradient: one buffer whose column blocks the blocks' dx are written into.
    // Under create_graph the blocks' products are recorded (ops autograd) and concatenated instead.
    const bool one_input = split_input(xs, weights), split = one_input && ctx->needs_input_grad(0);
    const bool recorded = c10::GradMode::is_enabled();
    at::Tensor dx;
    std::vector<at::Tensor> dx_parts;
    if (split && !recorded)
      dx = xs[0].is_cpu() ? empty_output(xs[0].sizes(), dy.options()) : at::empty(xs[0].sizes(), dy.options());
    size_t bias_slot = nx + k;
    int64_t col = 0, in_col = 0;
    for (size_t i = 0; i < k; ++i) {
      const at::Tensor& w = weights[i];
      const bool want_b = has_bias.get(i) && ctx->needs_input_grad(bias_slot);
      const at::Tensor dy_i = dy.narrow(1, col, w.size(0));
      // Parameter gradients before dx (as in linear_op.cpp): their scratch is freed first.
      auto [dw, db] = weight_grads(dy_i, in[i], ctx->needs_input_grad(nx + i), want_b);
      out[nx + i] = dw;
      if (want_b) out[bias_slot] = db;
      if (split && recorded) {
        dx_parts.push_back(dy_i.mm(w));
      } else if (split) {
        at::Tensor block = dx.narrow(1, in_col, w.size(1));
        if (!linear_into(block, dy_i, w, {}, {}, /*w_transposed=*/true)) at::mm_out(block, dy_i, w);
      } else if (!one_input && ctx->needs_input_grad(i)) {
        out[i] = add_input_grad({}, dy_i, w);
      }
      col += w.size(0);
      in_col += w.size(1);
      if (has_bias.get(i)) ++bias_slot;
    }
    if (split) out[0] = recorded ? at::cat(dx_parts, 1) : dx;
    return out;
  }
};

at::Tensor linear_blocks_autograd(at::TensorList xs, at::TensorList weights, const OptTensorList& biases) {
  const std::vector<at::Tensor> bs = to_vector(biases);
  check_args(xs, weights, bs);
  bool grad = false;
  for (const at::Tensor& x : xs) grad = grad || needs_grad(x);
  for (size_t i = 0; i < weights.size(); ++i) grad = grad || needs_grad(weights[i], bs[i]);
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
