// The C++ layers' projections: see projections.hpp.
#include "projections.hpp"

#include <ATen/Context.h>

#include <algorithm>

#include "attention_op.hpp"  // add_to_fresh
#include "autocast.hpp"
#include "linear_op.hpp"     // call_linear, call_linears, linear_heads
#include "outputs.hpp"       // huge_output_min_bytes

namespace tessera::pt {

namespace {

bool same_dtype_2d(const torch::nn::Linear& lin, const at::Tensor& x) {
  return x.dim() == 2 && x.is_floating_point() && x.scalar_type() == lin->weight.scalar_type();
}

// Projections of x on tessera's tensor-core kernel: CUDA fp32 where torch's fp32 matmuls are IEEE
// and autocast is off (it asks for the products in its own type: at::linear's).
bool tensor_cores(const at::Tensor& x) {
  return x.is_cuda() && x.scalar_type() == at::kFloat && !at::globalContext().allowTF32CuBLAS() && !autocast_on(x);
}

c10::optional<at::Tensor> bias_of(const torch::nn::Linear& lin) {
  return lin->bias.defined() ? c10::optional<at::Tensor>(lin->bias) : c10::nullopt;
}

std::vector<at::Tensor> stacked(const std::vector<torch::nn::Linear>& lins, const at::Tensor& x) {
  std::vector<at::Tensor> weights, biases;
  for (const auto& lin : lins) {
    weights.push_back(lin->weight);
    biases.push_back(lin->bias);  // undefined without one
  }
  return call_linears(x, weights, biases);
}

std::vector<at::Tensor> each(const std::vector<torch::nn::Linear>& lins, const at::Tensor& x) {
  std::vector<at::Tensor> out;
  for (auto lin : lins) out.push_back(lin->forward(x));  // a holder copy: forward is not const
  return out;
}

}  // namespace

std::vector<at::Tensor> linears(const std::vector<torch::nn::Linear>& lins, const at::Tensor& x) {
  bool fast = true;
  for (const auto& lin : lins) fast = fast && same_dtype_2d(lin, x);
  if (!x.is_cpu()) {
    if (!fast || !tensor_cores(x)) return each(lins, x);
    if (lins.size() > 1) return stacked(lins, x);
    return {call_linear(x, lins[0]->weight, bias_of(lins[0]))};
  }
  int64_t widest = x.size(-1);
  for (const auto& lin : lins) widest = std::max(widest, lin->weight.size(0));
  if (!fast || x.size(0) * widest * int64_t(x.element_size()) < huge_output_min_bytes() || autocast_on(x))
    return each(lins, x);
  return stacked(lins, x);
}

at::Tensor linear(const torch::nn::Linear& lin, const at::Tensor& x) { return linears({lin}, x)[0]; }

namespace {
// Products the user asked torch for in less than fp32: a CUDA fp32 tensor's where TF32 is allowed,
// or any under autocast. at::linear gives them that.
bool torch_precision(const at::Tensor& x) {
  return (x.is_cuda() && x.scalar_type() == at::kFloat && at::globalContext().allowTF32CuBLAS()) || autocast_on(x);
}
}  // namespace

std::vector<at::Tensor> products(const at::Tensor& x, const std::vector<at::Tensor>& weights,
                                 const std::vector<at::Tensor>& biases) {
  if (!torch_precision(x)) return call_linears(x, weights, biases);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < weights.size(); ++i) out.push_back(at::linear(x, weights[i], biases[i]));
  return out;
}

at::Tensor heads_product(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& x2,
                         const at::Tensor& weight2, const at::Tensor& bias2) {
  if (!torch_precision(x)) return linear_heads(x, weight, bias, x2, weight2, bias2);
  const int64_t heads = x.size(1) / weight.size(1);
  const std::vector<at::Tensor> xs = x.chunk(heads, 1), ws = weight.chunk(heads);
  const std::vector<at::Tensor> bs = bias.defined() ? bias.chunk(heads) : std::vector<at::Tensor>(size_t(heads));
  std::vector<at::Tensor> out;
  for (size_t h = 0; h < size_t(heads); ++h) out.push_back(at::linear(xs[h], ws[h], bs[h]));
  at::Tensor y = at::cat(out, 1);
  return x2.defined() ? y + at::linear(x2, weight2, bias2) : y;
}

std::vector<at::Tensor> project(const std::vector<std::pair<torch::nn::Linear, at::Tensor>>& pairs) {
  std::vector<at::Tensor> out(pairs.size());
  std::vector<bool> done(pairs.size(), false);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (done[i]) continue;
    std::vector<size_t> group;
    std::vector<torch::nn::Linear> lins;
    for (size_t j = i; j < pairs.size(); ++j)
      if (!done[j] && pairs[j].second.is_same(pairs[i].second)) {
        group.push_back(j);
        lins.push_back(pairs[j].first);
        done[j] = true;
      }
    const std::vector<at::Tensor> ys = linears(lins, pairs[i].second);
    for (size_t k = 0; k < group.size(); ++k) out[group[k]] = ys[k];
  }
  return out;
}

at::Tensor linear_add(const torch::nn::Linear& lin, const at::Tensor& x, at::Tensor out) {
  if (same_dtype_2d(lin, x) && out.scalar_type() == x.scalar_type() && out.dim() == 2 && out.size(0) == x.size(0) &&
      out.size(1) == lin->weight.size(0)) {
    if (tensor_cores(x)) return call_linear(x, lin->weight, bias_of(lin), out);
    if (!autocast_on(x)) {  // the GEMM accumulates into out (beta = 1): no projection buffer
      out.addmm_(x, lin->weight.t());
      return lin->bias.defined() ? out.add_(lin->bias) : out;
    }
  }
  return add_to_fresh(out, linear(lin, x));
}

}  // namespace tessera::pt
