// tessera::nn::SAGEConv in C++: parameter names and shapes (PyG's, bipartite included), the output
// against a plain-torch implementation of PyG's SAGEConv in double (index_add / scatter_reduce over
// the edges: duplicates count per occurrence, no self-loops, 0 for targets without in-edges) on a
// homogeneous graph and on a bipartite block with and without the root term, gradients to both
// inputs, and the refusals of mismatched inputs.
#include <torch/torch.h>

#include <sstream>
#include <string>

#include "support/testing.hpp"
#include "tessera/core/error.hpp"
#include "tessera/torch/sage.hpp"

namespace tessera {
namespace {

// Edges from n_src sources to the first n_dst - 2 targets (the last two have no in-edges), with
// duplicates (E > n_src * n_dst would force them; the first edge is repeated outright).
torch::Tensor block_edges(int64_t n_src, int64_t n_dst, int64_t e, uint64_t seed) {
  torch::manual_seed(seed);
  auto src = torch::randint(0, n_src, {e}, torch::kLong), dst = torch::randint(0, n_dst - 2, {e}, torch::kLong);
  src[1] = src[0], dst[1] = dst[0];
  return torch::stack({src, dst});
}

// PyG's SAGEConv: x_j = relu(lin(x_src)) when project; aggregate x_j[src] at dst; lin_l(agg) +
// lin_r(x_dst) (when root_weight and x_dst is given); L2-normalize when normalize.
torch::Tensor pyg_sage(nn::SAGEConv& conv, const torch::Tensor& x_src, const torch::Tensor& x_dst,
                       const torch::Tensor& ei, int64_t n_dst) {
  const auto& o = conv->options;
  auto xj = o.project() ? torch::relu(conv->lin->forward(x_src)) : x_src;
  auto msg = xj.index_select(0, ei[0]);
  auto agg = torch::zeros({n_dst, xj.size(1)}, xj.options());
  if (o.aggr() == "mean" || o.aggr() == "sum") {
    agg.index_add_(0, ei[1], msg);
    if (o.aggr() == "mean") {
      auto cnt = torch::zeros({n_dst}, xj.options()).index_add_(0, ei[1], torch::ones({ei.size(1)}, xj.options()));
      agg = agg / cnt.clamp_min(1).unsqueeze(1);
    }
  } else {
    const auto idx = ei[1].unsqueeze(1).expand_as(msg);
    agg = agg.scatter_reduce(0, idx, msg, o.aggr() == "max" ? "amax" : "amin", /*include_self=*/false);
  }
  auto out = conv->lin_l->forward(agg);
  if (o.root_weight() && x_dst.defined()) out = out + conv->lin_r->forward(x_dst);
  if (o.normalize()) out = torch::nn::functional::normalize(out, torch::nn::functional::NormalizeFuncOptions().dim(-1));
  return out;
}

TEST(SAGEConv, BipartiteParametersArePyGs) {
  nn::SAGEConv conv(nn::SAGEConvOptions(6, 4).in_channels_dst(3).project(true));
  auto p = conv->named_parameters();
  ASSERT_EQ(p.size(), 5u);  // lin.weight, lin.bias, lin_l.weight, lin_l.bias, lin_r.weight
  EXPECT_EQ(p["lin.weight"].sizes(), torch::IntArrayRef({6, 6}));
  EXPECT_EQ(p["lin_l.weight"].sizes(), torch::IntArrayRef({4, 6}));
  EXPECT_EQ(p["lin_l.bias"].sizes(), torch::IntArrayRef({4}));
  EXPECT_EQ(p["lin_r.weight"].sizes(), torch::IntArrayRef({4, 3}));
  EXPECT_EQ(conv->in_channels_dst(), 3);
  EXPECT_EQ(nn::SAGEConv(6, 4)->in_channels_dst(), 6);
  std::ostringstream os;
  conv->pretty_print(os);
  EXPECT_EQ(os.str(), "tessera::nn::SAGEConv((6, 3), 4, aggr=mean)");
}

TEST(SAGEConv, MatchesPyGSemanticsInDouble) {
  const uint64_t s = testing::seed();
  const int64_t n_src = 53, n_dst = 31, e = 400, in_src = 7, in_dst = 5, out = 6;
  const auto ei = block_edges(n_src, n_dst, e, s);
  const auto homo = block_edges(n_src, n_src, e, s + 1);
  int n = 0;
  for (const std::string aggr : {"mean", "max", "min", "sum"})
    for (bool project : {false, true}) {
      const bool normalize = ++n % 2 == 0, root = n % 3 != 0;
      const std::string what = aggr + (project ? " project" : "") + (normalize ? " normalize" : "") +
                               (root ? "" : " no root") + " seed " + std::to_string(s);
      torch::manual_seed(s + uint64_t(n));
      nn::SAGEConv bi(nn::SAGEConvOptions(in_src, out).in_channels_dst(in_dst).aggr(aggr).project(project)
                          .normalize(normalize).root_weight(root));
      bi->to(torch::kDouble);
      auto x_src = torch::randn({n_src, in_src}, torch::kDouble), x_dst = torch::randn({n_dst, in_dst}, torch::kDouble);
      EXPECT_TRUE(torch::allclose(bi->forward(x_src, x_dst, ei), pyg_sage(bi, x_src, x_dst, ei, n_dst), 1e-10, 1e-12))
          << "bipartite " << what;
      // (x_src, None): no root term; the targets' count comes from num_dst.
      EXPECT_TRUE(torch::allclose(bi->forward(x_src, torch::Tensor(), ei, n_dst),
                                  pyg_sage(bi, x_src, torch::Tensor(), ei, n_dst), 1e-10, 1e-12))
          << "bipartite without x_dst " << what;
      nn::SAGEConv same(nn::SAGEConvOptions(in_src, out).aggr(aggr).project(project).normalize(normalize).root_weight(root));
      same->to(torch::kDouble);
      EXPECT_TRUE(torch::allclose(same->forward(x_src, homo), pyg_sage(same, x_src, x_src, homo, n_src), 1e-10, 1e-12))
          << "homogeneous " << what;
    }
}

TEST(SAGEConv, BipartiteGradientsReachBothInputs) {
  const uint64_t s = testing::seed();
  const auto ei = block_edges(40, 12, 150, s);
  nn::SAGEConv conv(nn::SAGEConvOptions(8, 4).in_channels_dst(3).aggr("max"));
  conv->to(torch::kDouble);
  auto x_src = torch::randn({40, 8}, torch::kDouble).requires_grad_(), x_dst = torch::randn({12, 3}, torch::kDouble).requires_grad_();
  auto w = torch::randn({12, 4}, torch::kDouble);
  (conv->forward(x_src, x_dst, ei) * w).sum().backward();
  auto xs = x_src.detach().clone().requires_grad_(), xd = x_dst.detach().clone().requires_grad_();
  (pyg_sage(conv, xs, xd, ei, 12) * w).sum().backward();
  EXPECT_TRUE(torch::allclose(x_src.grad(), xs.grad(), 1e-10, 1e-12)) << "seed " << s;
  EXPECT_TRUE(torch::allclose(x_dst.grad(), xd.grad(), 1e-10, 1e-12)) << "seed " << s;
}

// CUDA fp32: the projections (lin, lin_l) on tessera's tf32x3 kernel (projections.hpp), against the
// double formula on the same weights.
TEST(SAGEConvCuda, Fp32MatchesPyGSemanticsInDouble) {
  TESSERA_REQUIRE_CUDA();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch has no CUDA in this build";
  const uint64_t s = testing::seed();
  const auto ei = block_edges(300, 120, 2000, s);
  nn::SAGEConv conv(nn::SAGEConvOptions(32, 64).in_channels_dst(16).project(true));
  auto x_src = torch::randn({300, 32}, torch::kDouble), x_dst = torch::randn({120, 16}, torch::kDouble);
  nn::SAGEConv ref(std::dynamic_pointer_cast<nn::SAGEConvImpl>(conv->clone()));
  ref->to(torch::kDouble);
  const auto expected = pyg_sage(ref, x_src, x_dst, ei, 120);
  conv->to(torch::kCUDA);
  const auto got = conv->forward(x_src.to(torch::kCUDA, torch::kFloat), x_dst.to(torch::kCUDA, torch::kFloat), ei.cuda())
                       .to(torch::kCPU, torch::kDouble);
  EXPECT_TRUE(torch::allclose(got, expected, 2e-5, 2e-5)) << "seed " << s << ", max diff "
                                                          << (got - expected).abs().max().item<double>();
}

TEST(SAGEConv, MismatchedBipartiteInputsAreRefused) {
  const auto refused = [](auto&& call, const std::string& says) { testing::expect_error_saying(call, says); };
  const auto ei = block_edges(20, 10, 60, testing::seed());
  nn::SAGEConv conv(nn::SAGEConvOptions(8, 4).in_channels_dst(3));
  const auto x_src = torch::randn({20, 8}), x_dst = torch::randn({10, 3});
  refused([&] { conv->forward(x_src, torch::randn({10, 8}), ei); }, "in_channels_dst");
  refused([&] { conv->forward(x_src, torch::Tensor(), ei); }, "num_dst");
  refused([&] { conv->forward(x_src, x_dst, ei, 11); }, "num_dst = 11");
  refused([&] { conv->forward(torch::randn({20, 3}), x_dst, ei); }, "in_channels");
  refused([&] { conv->forward(x_src, block_edges(20, 20, 60, 1)); }, "in_channels_dst");  // homogeneous: x is 8 wide
  refused([&] { conv->forward(x_src.narrow(0, 0, 15), x_dst, ei); }, "edge_index");  // a source past x_src's rows
  refused([&] { nn::SAGEConv(nn::SAGEConvOptions(8, 4).in_channels_dst(0)); }, "in_channels_dst must be positive");
}

}  // namespace
}  // namespace tessera
