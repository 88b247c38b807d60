// The torch layer's spmm / sddmm / gcn_norm ops against plain-loop references in double, finite
// differences for the gradients, and the errors bad tensors raise.
#include <torch/torch.h>

#include <cmath>
#include <random>

#include "support/testing.hpp"
#include "torch/spmm_op.hpp"
#include "torch/graph_ops.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ops/spmm.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera {
namespace {

struct HostGraph {
  std::vector<int64_t> rowptr, col;
  std::vector<double> w;
  int64_t rows = 0, cols = 0;
};

// A nasty graph (empty rows, one huge row, duplicates) as CSR tensors of index type `it`.
HostGraph nasty(uint64_t seed, int64_t rows, int64_t cols, int64_t huge = 300) {
  testing::NastyOptions o;
  o.rows = rows;
  o.cols = cols;
  o.huge_row_degree = huge;
  auto coo = testing::nasty_coo<int64_t>(o, seed);
  BuildOptions b;
  b.deduplicate = false;
  auto csr = build_csr(coo, b);
  HostGraph h;
  h.rows = csr.rows;
  h.cols = csr.cols;
  h.rowptr = csr.rowptr;
  h.col = csr.col;
  h.w.assign(csr.values.begin(), csr.values.end());
  return h;
}

torch::Tensor tens(const std::vector<int64_t>& v, torch::ScalarType it) { return torch::tensor(v, torch::kLong).to(it); }

// Y[i] = sum_k w[k] X[col k] in double.
torch::Tensor ref_spmm(const HostGraph& g, const torch::Tensor& x) {
  auto xd = x.to(torch::kDouble).contiguous();
  auto y = torch::zeros({g.rows, x.size(1)}, torch::kDouble);
  auto X = xd.accessor<double, 2>();
  auto Y = y.accessor<double, 2>();
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1]; ++k)
      for (int64_t f = 0; f < x.size(1); ++f) Y[i][f] += g.w[k] * X[g.col[k]][f];
  return y;
}

class SpmmOp : public ::testing::TestWithParam<std::tuple<torch::ScalarType, int64_t>> {};

TEST_P(SpmmOp, MatchesReferenceOnNastyGraphs) {
  const auto [it, width] = GetParam();
  const uint64_t s = testing::seed(uint64_t(width));
  const auto g = nasty(s, 613, 571);
  torch::manual_seed(s);
  auto x = torch::randn({g.cols, width});
  auto values = torch::tensor(std::vector<double>(g.w.begin(), g.w.end()), torch::kDouble).to(torch::kFloat);
  auto y = pt::spmm(tens(g.rowptr, it), tens(g.col, it), values, x);
  auto expected = ref_spmm(g, x);
  EXPECT_TRUE(torch::allclose(y.to(torch::kDouble), expected, 1e-4, 1e-4)) << "seed " << s;
  EXPECT_FALSE(y.isnan().any().item<bool>()) << "seed " << s;
  // Strided rows (a column slice of a wider matrix) give the same result.
  auto wide = torch::randn({g.cols, width + 5});
  wide.narrow(1, 0, width).copy_(x);
  auto ys = pt::spmm(tens(g.rowptr, it), tens(g.col, it), values, wide.narrow(1, 0, width));
  EXPECT_TRUE(torch::allclose(ys, y, 1e-5, 1e-5)) << "seed " << s;
}

INSTANTIATE_TEST_SUITE_P(Widths, SpmmOp,
                         ::testing::Combine(::testing::Values(torch::kInt, torch::kLong),
                                            ::testing::Values(int64_t(1), int64_t(3), int64_t(17), int64_t(64),
                                                              int64_t(129))));

TEST(SpmmOp, UnweightedMeansAllOnes) {
  const uint64_t s = testing::seed();
  auto g = nasty(s, 200, 150, 0);
  auto x = torch::randn({g.cols, 9});
  auto y = pt::spmm(tens(g.rowptr, torch::kInt), tens(g.col, torch::kInt), {}, x);
  std::fill(g.w.begin(), g.w.end(), 1.0);
  EXPECT_TRUE(torch::allclose(y.to(torch::kDouble), ref_spmm(g, x), 1e-4, 1e-4)) << "seed " << s;
}

// Central finite differences in double of L = <dY, spmm(values, X)> against autograd.
TEST(SpmmOp, GradientsMatchFiniteDifferencesInDouble) {
  const uint64_t s = testing::seed();
  const auto g = nasty(s, 37, 29, 12);
  torch::manual_seed(s);
  auto rowptr = tens(g.rowptr, torch::kLong), col = tens(g.col, torch::kLong);
  auto values = torch::rand({int64_t(g.col.size())}, torch::kDouble).requires_grad_();
  auto x = torch::randn({g.cols, 5}, torch::kDouble).requires_grad_();
  auto dy = torch::randn({g.rows, 5}, torch::kDouble);
  auto loss = [&](const torch::Tensor& v, const torch::Tensor& xx) {
    return (pt::spmm(rowptr, col, v, xx) * dy).sum();
  };
  auto grads = torch::autograd::grad({loss(values, x)}, {values, x});
  torch::NoGradGuard no_grad;
  const double eps = 1e-6;
  auto check = [&](const torch::Tensor& param, const torch::Tensor& grad, bool is_x) {
    auto flat = param.detach().clone().flatten();
    for (int64_t k = 0; k < flat.numel(); k += std::max<int64_t>(1, flat.numel() / 40)) {
      auto plus = flat.clone(), minus = flat.clone();
      plus[k] += eps;
      minus[k] -= eps;
      auto p = plus.view(param.sizes()), m = minus.view(param.sizes());
      const double fd = ((is_x ? loss(values.detach(), p) : loss(p, x.detach())) -
                         (is_x ? loss(values.detach(), m) : loss(m, x.detach())))
                            .item<double>() / (2 * eps);
      EXPECT_NEAR(grad.flatten()[k].item<double>(), fd, 1e-6 * std::max(1.0, std::abs(fd))) << "entry " << k << " seed " << s;
    }
  };
  check(values, grads[0], false);
  check(x, grads[1], true);
}

TEST(SddmmOp, MatchesReference) {
  const uint64_t s = testing::seed();
  const auto g = nasty(s, 120, 90, 40);
  torch::manual_seed(s);
  auto a = torch::randn({g.rows, 11}), b = torch::randn({g.cols, 11});
  auto out = pt::sddmm(tens(g.rowptr, torch::kInt), tens(g.col, torch::kInt), a, b);
  ASSERT_EQ(out.size(0), int64_t(g.col.size()));
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1]; ++k) {
      const double e = (a[i].to(torch::kDouble) * b[g.col[k]].to(torch::kDouble)).sum().item<double>();
      EXPECT_NEAR(out[k].item<double>(), e, 1e-4 * std::max(1.0, std::abs(e))) << "entry " << k << " seed " << s;
    }
}

// The torch gcn_norm ("remaining" loops) agrees with the core's host normalization.
TEST(GcnNorm, MatchesCoreNormalize) {
  const uint64_t s = testing::seed();
  testing::NastyOptions o;
  o.rows = o.cols = 300;
  auto coo = testing::nasty_coo<int64_t>(o, s);
  // At most one self-loop per node (duplicate loops keep PyG's unspecified "one of them" weight).
  Coo<int64_t> clean = coo;
  clean.src.clear(); clean.dst.clear(); clean.w.clear();
  std::vector<bool> has_loop(300, false);
  for (size_t k = 0; k < coo.src.size(); ++k) {
    if (coo.src[k] == coo.dst[k]) {
      if (has_loop[coo.src[k]]) continue;
      has_loop[coo.src[k]] = true;
    }
    clean.src.push_back(coo.src[k]); clean.dst.push_back(coo.dst[k]); clean.w.push_back(coo.w[k]);
  }
  BuildOptions b;
  b.deduplicate = false;
  const auto csr = build_csr(clean, b);
  ops::NormOptions no;
  no.improved = true;
  const auto core = ops::normalize(csr.view(), no);
  auto rowptr = torch::tensor(csr.rowptr, torch::kLong), col = torch::tensor(csr.col, torch::kLong);
  auto [rp, c, w] = pt::gcn_norm(rowptr, col, torch::tensor(csr.values, torch::kFloat), 300, "remaining", 2.0,
                                 torch::kDouble);
  ASSERT_EQ(c.size(0), core.nnz()) << "seed " << s;
  EXPECT_TRUE(torch::equal(rp, torch::tensor(core.rowptr, torch::kLong))) << "seed " << s;
  EXPECT_TRUE(torch::equal(c, torch::tensor(core.col, torch::kLong))) << "seed " << s;
  EXPECT_TRUE(torch::allclose(w, torch::tensor(core.values, torch::kFloat).to(torch::kDouble), 1e-5, 1e-6))
      << "seed " << s;
}

TEST(EdgeIndexToCsr, SortsByTargetAndMapsEdges) {
  auto ei = torch::tensor({3, 0, 2, 1, 0, 3, 3, 1}, torch::kLong).view({2, 4});  // src 3,0,2,1 -> dst 0,3,3,1
  auto [rowptr, col, perm] = pt::edge_index_to_csr(ei, 4, 4);
  EXPECT_EQ(rowptr.scalar_type(), torch::kInt);
  EXPECT_TRUE(torch::equal(rowptr, torch::tensor({0, 1, 2, 2, 4}, torch::kInt)));
  EXPECT_TRUE(torch::equal(col, torch::tensor({3, 1, 0, 2}, torch::kInt)));
  EXPECT_TRUE(torch::equal(perm, torch::tensor({0, 3, 1, 2}, torch::kLong)));
  auto [t_rowptr, t_col, t_perm] = pt::csr_transpose(rowptr, col, 4);
  EXPECT_TRUE(torch::equal(t_rowptr, torch::tensor({0, 1, 2, 3, 4}, torch::kInt)));
  EXPECT_TRUE(torch::equal(t_col, torch::tensor({3, 1, 3, 0}, torch::kInt)));
}

TEST(TorchViews, BadTensorsRaiseNamedErrors) {
  auto rowptr = torch::tensor({0, 1, 2}, torch::kInt), col = torch::tensor({1, 0}, torch::kInt);
  auto x = torch::randn({2, 3});
  // Through the dispatcher the message arrives as c10::Error (src/torch/boundary.hpp); direct
  // calls into the core raise tessera::Error. Both are std::exception and keep the text.
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { pt::spmm(rowptr, col, {}, x.to(torch::kLong)); }).find("float32, float64"), std::string::npos);
  EXPECT_NE(message([&] { pt::spmm(rowptr.to(torch::kLong), col, {}, x); }).find("one index type"), std::string::npos);
  EXPECT_NE(message([&] { pt::spmm(rowptr, col, torch::ones({3}), x); }).find("one entry per edge"), std::string::npos);
  EXPECT_NE(message([&] { pt::spmm(rowptr, col.to(torch::kFloat), {}, x); }).find("int32 or int64"), std::string::npos);
  EXPECT_NE(message([&] { pt::edge_index_to_csr(torch::tensor({0, 5}, torch::kLong).view({2, 1}), 3, 3); })
                .find("edge 0: target 5 out of range"),
            std::string::npos);
}

TEST(TorchViewsCuda, SpmmMatchesCpu) {
  TESSERA_REQUIRE_CUDA();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch has no CUDA in this build";
  const uint64_t s = testing::seed();
  const auto g = nasty(s, 2000, 1800, 900);
  torch::manual_seed(s);
  auto x = torch::randn({g.cols, 70});
  auto values = torch::tensor(std::vector<double>(g.w.begin(), g.w.end())).to(torch::kFloat);
  auto rowptr = tens(g.rowptr, torch::kInt), col = tens(g.col, torch::kInt);
  auto cpu = pt::spmm(rowptr, col, values, x);
  auto gpu = pt::spmm(rowptr.cuda(), col.cuda(), values.cuda(), x.cuda());
  EXPECT_TRUE(torch::allclose(gpu.cpu(), cpu, 1e-4, 1e-4)) << "seed " << s;
  auto dy = torch::randn({g.rows, 70});
  auto xg = x.cuda().requires_grad_();
  auto vg = values.cuda().requires_grad_();
  auto graph = pt::Graph::from_csr(rowptr.cuda(), col.cuda(), vg, g.cols);
  (pt::spmm(graph, xg) * dy.cuda()).sum().backward();
  auto xc = x.clone().requires_grad_();
  auto vc = values.clone().requires_grad_();
  (pt::spmm(rowptr, col, vc, xc) * dy).sum().backward();
  EXPECT_TRUE(torch::allclose(xg.grad().cpu(), xc.grad(), 1e-4, 1e-4)) << "seed " << s;
  EXPECT_TRUE(torch::allclose(vg.grad().cpu(), vc.grad(), 1e-3, 1e-3)) << "seed " << s;
}

}  // namespace
}  // namespace tessera
