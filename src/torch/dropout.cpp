#include "tessera/torch/dropout.hpp"

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstdint>

#include "gen/rng.hpp"
#include "tessera/core/error.hpp"
#include "torch/outputs.hpp"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// y = x * keep / (1 - p), keep_i = (u_i >= p) for u_i = Stream::uniform(i) of the seed's stream,
// compared as 53-bit integers (u_i >= p <=> (bits_i >> 11) >= ceil(p 2^53), exactly) and applied
// as a multiply, without a branch: a data-dependent branch mispredicts on half the elements at
// p = 0.5 (it made this 5 ns per element here). x * 0 keeps a dropped NaN or inf NaN, as torch.
torch::Tensor masked(const torch::Tensor& x, double p, int64_t seed) {
  const auto in = x.contiguous();
  auto out = pt::empty_output_like(in);
  const gen::detail::Stream stream(uint64_t(seed), 0);
  const uint64_t threshold = uint64_t(std::ceil(p * 0x1p53));
  const double scale = 1.0 / (1.0 - p);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, in.scalar_type(), "tessera::dropout", [&] {
    const scalar_t* src = in.data_ptr<scalar_t>();
    scalar_t* dst = out.data_ptr<scalar_t>();
    using acc_t = at::opmath_type<scalar_t>;
    const acc_t s = acc_t(scale);
    at::parallel_for(0, in.numel(), int64_t(1) << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const acc_t keep = (stream.bits(uint64_t(i)) >> 11) >= threshold ? s : acc_t(0);
        dst[i] = scalar_t(acc_t(src[i]) * keep);
      }
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

int64_t dropout_seed() { return torch::randint(int64_t(1) << 62, {1}, torch::kLong).item<int64_t>(); }

torch::Tensor dropout(const torch::Tensor& x, double p, bool training) {
  TESSERA_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  if (!x.device().is_cpu() || !x.is_floating_point()) return torch::dropout(x, p, training);
  if (p == 1.0) return x * 0;  // keeps the graph (and NaN * 0), as torch::dropout
  return DropoutFunction::apply(x, p, dropout_seed());
}

}  // namespace tessera::nn
