#include "tessera/torch/dropout.hpp"

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <cstdint>

#include "gen/rng.hpp"
#include "tessera/core/error.hpp"
#include "torch/outputs.hpp"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// y = x * keep / (1 - p), keep_i = (uniform_i >= p) with uniform_i counter i of the seed's stream.
torch::Tensor masked(const torch::Tensor& x, double p, int64_t seed) {
  const auto in = x.contiguous();
  auto out = pt::empty_output_like(in);
  const gen::detail::Stream stream(uint64_t(seed), 0);
  const double scale = 1.0 / (1.0 - p);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scalar_type(), "tessera::dropout", [&] {
    const scalar_t* src = in.data_ptr<scalar_t>();
    scalar_t* dst = out.data_ptr<scalar_t>();
    using acc_t = at::opmath_type<scalar_t>;
    const acc_t s = acc_t(scale);
    at::parallel_for(0, in.numel(), int64_t(1) << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        dst[i] = stream.uniform(uint64_t(i)) >= p ? scalar_t(acc_t(src[i]) * s) : scalar_t(0);
    });
  });
  return out;
}

class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p, int64_t seed) {
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = seed;
    return masked(x, p, seed);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const double p = ctx->saved_data["p"].toDouble();
    const int64_t seed = ctx->saved_data["seed"].toInt();
    return {masked(grads[0], p, seed), torch::Tensor(), torch::Tensor()};  // the same mask, redrawn
  }
};

}  // namespace

torch::Tensor dropout(const torch::Tensor& x, double p, bool training) {
  TESSERA_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  if (!x.device().is_cpu() || !x.is_floating_point()) return torch::dropout(x, p, training);
  if (p == 1.0) return x * 0;  // keeps the graph (and NaN * 0), as torch::dropout
  const int64_t seed = torch::randint(int64_t(1) << 62, {1}, torch::kLong).item<int64_t>();
  return DropoutFunction::apply(x, p, seed);
}

}  // namespace tessera::nn
