// tessera::nn::dropout (the models' dropout): torch::dropout's semantics, a counter-based CPU mask
// that is the same for every thread count, reproduced from torch's seed, and redrawn (not stored)
// in the backward; and the GATv2 self-loop fill of 16-bit edge features (accumulated in fp32).
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>

#include "support/testing.hpp"
#include "tessera/torch/dropout.hpp"
#include "tessera/torch/gatv2.hpp"

namespace tessera {
namespace {

TEST(Dropout, KeepsAboutOneMinusPScaledAndIsOffOutsideTraining) {
  torch::manual_seed(11);
  const int64_t n = 1 << 20;
  const auto x = torch::rand({n / 128, 128}, torch::kFloat) + 0.5;  // no zeros of its own
  for (const double p : {0.1, 0.5, 0.9}) {
    const auto y = nn::dropout(x, p, true);
    const auto kept = y.ne(0);
    const double frac = kept.to(torch::kDouble).mean().item<double>();
    const double sigma = std::sqrt(p * (1 - p) / double(n));
    EXPECT_NEAR(frac, 1 - p, 6 * sigma) << "p = " << p;
    EXPECT_TRUE(torch::equal(y.masked_select(kept), (x * float(1 / (1 - p))).masked_select(kept))) << "p = " << p;
  }
  EXPECT_TRUE(nn::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(nn::dropout(x, 0.0, true).is_same(x));
  EXPECT_EQ(nn::dropout(x, 1.0, true).abs().sum().item<double>(), 0.0);
  EXPECT_THROW(nn::dropout(x, 1.5, true), Error);
}

TEST(Dropout, SameMaskForEveryThreadCountAndTorchSeed) {
  const auto x = torch::randn({3000, 77}, torch::kDouble);
  const int threads = at::get_num_threads();
  torch::manual_seed(5);
  at::set_num_threads(1);
  const auto a = nn::dropout(x, 0.3, true);
  torch::manual_seed(5);
  at::set_num_threads(std::max(2, threads));
  const auto b = nn::dropout(x, 0.3, true);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, nn::dropout(x, 0.3, true)));  // a new draw from the generator
}

TEST(Dropout, BackwardRedrawsTheForwardMask) {
  torch::manual_seed(3);
  const auto x = (torch::rand({500, 40}, torch::kDouble) + 0.5).requires_grad_();
  const auto w = torch::randn({500, 40}, torch::kDouble);
  torch::manual_seed(7);
  const auto y = nn::dropout(x, 0.4, true);
  (y * w).sum().backward();
  const auto mask = y.detach().ne(0).to(torch::kDouble) / 0.6;
  EXPECT_TRUE(torch::allclose(x.grad(), mask * w, 0, 1e-15));
  for (const auto dt : {torch::kFloat, torch::kHalf, torch::kBFloat16}) {  // 16-bit inputs too
    torch::manual_seed(7);
    const auto y16 = nn::dropout(x.detach().to(dt), 0.4, true);
    EXPECT_EQ(y16.scalar_type(), dt);
    EXPECT_TRUE(torch::equal(y16.ne(0), y.detach().ne(0)));  // the same counters, whatever the type
  }
}

TEST(GATv2SelfLoopFill, SixteenBitMeansAndSumsAreAccumulatedInFloat) {
  // A hub of 4096 in-edges with features near 1: summed in f16 the running sum stops near 2048.
  torch::manual_seed(9);
  const auto targets = torch::cat({torch::full({4096}, 3, torch::kLong), torch::randint(0, 10, {300}, torch::kLong)});
  const auto ea = torch::rand({targets.numel(), 2}, torch::kDouble) * 0.1 + 1;
  for (const std::string reduce : {"mean", "sum"}) {
    for (const auto dt : {torch::kHalf, torch::kBFloat16}) {
      const auto in = ea.to(dt);
      const auto exact = nn::self_loop_fill(in.to(torch::kDouble), targets, 10, reduce);  // of the rounded inputs
      const auto got = nn::self_loop_fill(in, targets.to(torch::kInt), 10, reduce);
      EXPECT_EQ(got.scalar_type(), dt);
      const double ulp = dt == torch::kHalf ? 0x1p-10 : 0x1p-7;  // one rounding of the result
      EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), exact, ulp, 0))
          << reduce << " " << dt << ": " << (got.to(torch::kDouble) - exact).abs().max().item<double>();
    }
  }
  const auto mx = nn::self_loop_fill(ea, targets, 12, "amax");  // nodes 10, 11: no in-edges, zeros
  EXPECT_EQ(mx.index({torch::indexing::Slice(10, 12)}).abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace tessera
