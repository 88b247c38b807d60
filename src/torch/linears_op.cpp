// tessera::linears(x, weights, biases) = [x w_i^T + b_i for each i]: the projections of one input
// (GATv2's lin_l/lin_r, the Graph Transformer's query/key/value) as one op and, in training, one
// autograd node. The outputs are column blocks of one [rows, sum of out_features] tensor (views
// whose rows are strided; autograd refuses in-place changes to them, as for any view a Function
// returns).
//
// Why one node, and why in C++: on small graphs a layer's time is its host path, and on the H200's
// host every op costs ~25-30 us (an allocation ~7 us, a launch ~12 us, the dispatcher). The Python
// Function this replaces spent ~230 us per training step of its own (bench/results/h200_20261203d:
// host_gatv2_*.txt, Cora GATv2 fwd+bwd 1.48 ms of host time against 0.18 ms of GPU work) and
// concatenated the weights (and biases) on every forward.
//
// Forward
//   CUDA fp32 (tessera's tf32x3 kernel; the Python layers call this op only where torch's float32
//     matmul precision is "highest"): one allocation, then one kernel per weight writing its column
//     block. No concatenated weight: each launch reads x, as the one stacked GEMM did per column
//     tile.
//   Otherwise (CPU, other dtypes, a block the kernel cannot take): one GEMM against the stacked
//     weights. On the CPU into the ops' huge-page output memory (outputs.hpp): on the 2-core
//     development machine [65536, 128] x [128, 512] took 61-65 ms against 92-101 for four [128, 128]
//     GEMMs (OpenBLAS, best of 11).
// Backward
//   dx = sum_i dy_i w_i in one buffer (add_input_grad, linear_op.hpp): on CUDA fp32 each product is
//     added by the kernel's epilogue (the buffer is its own residual; the kernel reads each
//     [out, in] weight as stored), elsewhere dx = dy_0 w_0, then addmm_. Autograd would instead
//     add per-projection dx tensors in fresh buffers (an add of a [2^20, 128] fp32 gradient moves
//     1.5 GB: 0.37 ms on the H200; on the CPU each such add of a [65536, 128] gradient cost 40-50 ms,
//     mostly first-touch page faults).
//   dw_i = dy_i^T x, db_i = column sums of dy_i (weight_grads, linear_op.hpp: on the H200 one pass
//     of tessera's wgmma kernel for both).
//   When dy_i .. dy_j arrive as adjacent column blocks of one buffer, in this node's order (the
//   attention op lays out the gradients of q, k, v like q, k, v: column_blocks.hpp), they are one
//   matrix dY: dx += dY [w_i; ...; w_j] (the weights stacked, small), dW = dY^T x and db = column
//   sums of dY, split by rows: one GEMM or gemv of each kind for the run.
#include <torch/autograd.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <vector>

#include "bias_list.hpp"
#include "boundary.hpp"
#include "column_blocks.hpp"
#include "linear_op.hpp"
#include "needs_grad.hpp"
#include "outputs.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

namespace {

void check_args(const at::Tensor& x, at::TensorList weights, size_t n_biases) {
  TESSERA_CHECK(x.defined() && x.dim() == 2, "linears: x must be 2-D (rows x in_features), got shape ",
                x.defined() ? x.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(!weights.empty(), "linears: no weights given");
  TESSERA_CHECK(n_biases == weights.size(), "linears: ", weights.size(), " weights but ", n_biases,
                " biases (give None for a projection without one)");
  for (size_t i = 0; i < weights.size(); ++i) {
    const at::Tensor& w = weights[i];
    TESSERA_CHECK(w.defined() && w.dim() == 2 && w.size(1) == x.size(1), "linears: weight ", i, " must be [out_features, ",
                  x.size(1), "], got shape ", w.defined() ? w.sizes() : at::IntArrayRef{});
    TESSERA_CHECK(w.scalar_type() == x.scalar_type() && w.device() == x.device(), "linears: weight ", i, " is ",
                  w.scalar_type(), " on ", w.device(), " but x is ", x.scalar_type(), " on ", x.device());
  }
}

void check_bias(const at::Tensor& b, const at::Tensor& w, size_t i) {
  if (!b.defined()) return;
  TESSERA_CHECK(b.dim() == 1 && b.size(0) == w.size(0), "linears: bias ", i, " must be [", w.size(0),
                "], got shape ", b.sizes());
  TESSERA_CHECK(b.scalar_type() == w.scalar_type() && b.device() == w.device(), "linears: bias ", i, " is ",
                b.scalar_type(), " on ", b.device(), " but weight ", i, " is ", w.scalar_type(), " on ", w.device());
}

std::vector<int64_t> widths_of(at::TensorList weights) {
  std::vector<int64_t> widths;
  for (const at::Tensor& w : weights) widths.push_back(w.size(0));
  return widths;
}

std::vector<at::Tensor> column_blocks(const at::Tensor& y, const std::vector<int64_t>& widths) {
  if (widths.size() == 1) return {y};  // one projection: the tensor itself, not a view
  return y.split_with_sizes(widths, 1);
}

// One GEMM against the stacked weights (and biases, zeros where a projection has none).
at::Tensor stacked(const at::Tensor& x, at::TensorList weights, const std::vector<at::Tensor>& biases, int64_t width) {
  const at::Tensor w = weights.size() == 1 ? weights[0] : at::cat(weights);
  bool any_bias = false;
  for (const at::Tensor& b : biases) any_bias = any_bias || b.defined();
  at::Tensor b;
  if (any_bias) {
    std::vector<at::Tensor> parts;
    for (size_t i = 0; i < biases.size(); ++i)
      parts.push_back(biases[i].defined() ? biases[i] : at::zeros({weights[i].size(0)}, x.options()));
    b = parts.size() == 1 ? parts[0] : at::cat(parts);
  }
  if (!x.is_cpu()) return at::linear(x, w, b);
  at::Tensor y = empty_output({x.size(0), width}, x.options());
  return b.defined() ? at::addmm_out(y, b, x, w.t()) : at::mm_out(y, x, w.t());
}

std::vector<at::Tensor> forward_impl(const at::Tensor& x, at::TensorList weights, const std::vector<at::Tensor>& biases) {
  const std::vector<int64_t> widths = widths_of(weights);
  int64_t width = 0;
  for (int64_t n : widths) width += n;
  if (x.is_cuda() && x.scalar_type() == at::kFloat) {
    at::Tensor y = at::empty({x.size(0), width}, x.options());
    const std::vector<at::Tensor> blocks = column_blocks(y, widths);
    bool done = true;
    for (size_t i = 0; i < weights.size() && done; ++i) done = linear_into(blocks[i], x, weights[i], biases[i], {});
    if (done) return blocks;  // else a block the kernel cannot take (odd width): the stacked GEMM redoes all
  }
  return column_blocks(stacked(x, weights, biases, width), widths);
}

std::vector<at::Tensor> linears_kernel(const at::Tensor& x, at::TensorList weights, const OptTensorList& biases) {
  check_args(x, weights, biases.size());
  const std::vector<at::Tensor> bs = to_vector(biases);
  for (size_t i = 0; i < bs.size(); ++i) check_bias(bs[i], weights[i], i);
  return forward_impl(x, weights, bs);
}

}  // namespace

std::vector<at::Tensor> call_linears(const at::Tensor& x, at::TensorList weights, const std::vector<at::Tensor>& bs) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("tessera::linears", "")
                       .typed<std::vector<at::Tensor>(const at::Tensor&, at::TensorList, const OptTensorList&)>();
  return op.call(x, weights, to_optional_list(bs));
}

namespace {

// Inputs: x, the weights, the biases that exist (autograd takes no undefined tensor as an input),
// and which projections have them.
class LinearsFunction : public torch::autograd::Function<LinearsFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                                                at::TensorList weights, at::TensorList biases,
                                                const c10::List<bool>& has_bias) {
    at::AutoDispatchBelowADInplaceOrView below;
    ctx->set_materialize_grads(false);  // a projection whose output gets no gradient: nothing to add
    std::vector<at::Tensor> saved{x};
    saved.insert(saved.end(), weights.begin(), weights.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["has_bias"] = has_bias;
    return call_linears(x, weights, all_biases(biases, has_bias));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const std::vector<at::Tensor> ws(saved.begin() + 1, saved.end());
    const c10::List<bool> has_bias = ctx->saved_data["has_bias"].toBoolList();
    const size_t k = grads.size();
    std::vector<size_t> bias_slot(k);  // the input index of projection i's bias, when it has one
    size_t n_biases = 0;
    for (size_t i = 0; i < k; ++i) bias_slot[i] = 1 + k + (has_bias.get(i) ? n_biases++ : 0);
    // One gradient per input: x, the weights, the biases, and none for has_bias.
    torch::autograd::variable_list out(1 + k + n_biases + 1);
    // Gradients that are adjacent column blocks of one buffer (the attention op lays out the
    // gradients of q, k, v like q, k, v: column_blocks.hpp) form runs, each one matrix: one product
    // of each kind per run. A run of one is a projection's own gradient.
    at::Tensor dx;
    for (const BlockRun& run : block_runs(grads)) {
      const at::Tensor& dy = run.matrix;
      std::vector<at::Tensor> run_ws(ws.begin() + run.begin, ws.begin() + run.end);
      std::vector<int64_t> widths;
      bool any_w = false, any_b = false;
      for (size_t i = run.begin; i < run.end; ++i) {
        widths.push_back(ws[i].size(0));
        any_w = any_w || ctx->needs_input_grad(1 + i);
        any_b = any_b || (has_bias.get(i) && ctx->needs_input_grad(bias_slot[i]));
      }
      // Parameter gradients before dx (as in linear_op.cpp): their scratch is freed first.
      const auto [dw_run, db_run] = weight_grads(dy, x, any_w, any_b);
      if (ctx->needs_input_grad(0))
        dx = add_input_grad(dx, dy, run_ws.size() == 1 ? run_ws[0] : at::cat(run_ws));  // weights stacked: small
      const std::vector<at::Tensor> dw = any_w ? dw_run.split_with_sizes(widths, 0) : std::vector<at::Tensor>();
      const std::vector<at::Tensor> db = any_b ? db_run.split_with_sizes(widths, 0) : std::vector<at::Tensor>();
      for (size_t i = run.begin; i < run.end; ++i) {
        if (any_w && ctx->needs_input_grad(1 + i)) out[1 + i] = dw[i - run.begin];
        if (any_b && has_bias.get(i) && ctx->needs_input_grad(bias_slot[i])) out[bias_slot[i]] = db[i - run.begin];
      }
    }
    out[0] = dx;
    return out;
  }
};

std::vector<at::Tensor> linears_autograd(const at::Tensor& x, at::TensorList weights, const OptTensorList& biases) {
  check_args(x, weights, biases.size());
  const std::vector<at::Tensor> bs = to_vector(biases);
  bool grad = needs_grad(x);
  for (size_t i = 0; i < bs.size(); ++i) {
    check_bias(bs[i], weights[i], i);
    grad = grad || needs_grad(weights[i], bs[i]);
  }
  if (!grad) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linears(x, weights, bs);
  }
  const PresentBiases p = present_biases(bs);
  return LinearsFunction::apply(x, weights, at::TensorList(p.present), p.has_bias);
}

}  // namespace

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("linears(Tensor x, Tensor[] weights, Tensor?[] biases) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(tessera, CPU, m) { m.impl("linears", TESSERA_TORCH_FN(tessera::pt::linears_kernel)); }

#ifdef TESSERA_TORCH_CUDA
TORCH_LIBRARY_IMPL(tessera, CUDA, m) { m.impl("linears", TESSERA_TORCH_FN(tessera::pt::linears_kernel)); }
#endif

TORCH_LIBRARY_IMPL(tessera, Autograd, m) { m.impl("linears", TESSERA_TORCH_FN(tessera::pt::linears_autograd)); }
