// tessera::nn::GCNConv: parameter names and state_dict layout (PyG's), output against a plain-torch
// implementation of PyG's gcn_norm + propagate in double, the identity-keyed cache, and the
// model registry used by `tessera train`.
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "support/testing.hpp"
#include "tessera/torch/gcn.hpp"
#include "tessera/torch/models.hpp"

namespace tessera {
namespace {

torch::Tensor random_edge_index(int64_t n, int64_t e, uint64_t seed) {
  torch::manual_seed(seed);
  auto ei = torch::randint(0, n - 2, {2, e}, torch::kLong);  // the last two nodes are isolated
  ei.index_put_({1, torch::indexing::Slice(e - 3, e)}, ei.index({0, torch::indexing::Slice(e - 3, e)}));  // loops
  return ei;
}

// PyG 2.x: add_remaining_self_loops (existing loop weights kept, missing ones `fill`), deg at the
// target, D^-1/2 A D^-1/2, then out = sum_j w_ji x_j via index_select + index_add.
torch::Tensor pyg_propagate(const torch::Tensor& x, const torch::Tensor& ei, torch::Tensor w, double fill) {
  const int64_t n = x.size(0);
  auto mask = ei[0].ne(ei[1]);
  auto loop_w = torch::full({n}, fill, w.options());
  auto inv = mask.logical_not();
  loop_w.index_put_({ei[0].masked_select(inv)}, w.masked_select(inv));
  auto loops = torch::arange(n, ei.options());
  auto src = torch::cat({ei[0].masked_select(mask), loops}), dst = torch::cat({ei[1].masked_select(mask), loops});
  w = torch::cat({w.masked_select(mask), loop_w});
  auto deg = torch::zeros({n}, w.options()).index_add(0, dst, w);
  auto dis = deg.pow(-0.5).masked_fill(deg.eq(0), 0);
  auto norm = dis.index_select(0, src) * w * dis.index_select(0, dst);
  auto msg = x.index_select(0, src) * norm.view({-1, 1});
  return torch::zeros_like(x).index_add(0, dst, msg);
}

TEST(GCNConv, StateDictLayoutIsPyGs) {
  nn::GCNConv conv(16, 8);
  auto params = conv->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_TRUE(params.contains("lin.weight"));
  EXPECT_TRUE(params.contains("bias"));
  EXPECT_EQ(params["lin.weight"].sizes(), torch::IntArrayRef({8, 16}));
  EXPECT_EQ(params["bias"].sizes(), torch::IntArrayRef({8}));
  EXPECT_TRUE(torch::all(params["bias"].eq(0)).item<bool>());
  const double a = std::sqrt(6.0 / 24.0);
  EXPECT_LE(params["lin.weight"].abs().max().item<double>(), a);
  nn::GCNConv no_bias(nn::GCNConvOptions(16, 8).bias(false));
  EXPECT_EQ(no_bias->named_parameters().size(), 1u);
}

TEST(GCNConv, MatchesPyGSemanticsInDouble) {
  const uint64_t s = testing::seed();
  const int64_t n = 97, e = 800;
  auto ei = random_edge_index(n, e, s);
  auto w = torch::rand({e}, torch::kDouble) + 0.1;
  auto x = torch::randn({n, 13}, torch::kDouble);
  for (bool improved : {false, true}) {
    nn::GCNConv conv(nn::GCNConvOptions(13, 7).improved(improved));
    conv->to(torch::kDouble);
    torch::NoGradGuard g;
    conv->bias.normal_();
    auto expected = pyg_propagate(torch::mm(x, conv->lin->weight.t()), ei, w, improved ? 2.0 : 1.0) + conv->bias;
    EXPECT_TRUE(torch::allclose(conv->forward(x, ei, w), expected, 1e-10, 1e-10)) << "seed " << s;
    // Unweighted edge_index: PyG >= 2.3 fills every loop with 1 even when improved.
    auto ones = torch::ones({e}, torch::kDouble);
    auto expected1 = pyg_propagate(torch::mm(x, conv->lin->weight.t()), ei, ones, 1.0) + conv->bias;
    EXPECT_TRUE(torch::allclose(conv->forward(x, ei), expected1, 1e-10, 1e-10)) << "seed " << s;
  }
}

// CUDA fp32: the projection on tessera's tf32x3 kernel (projections.hpp; fp32-level error, where TF32
// would be ~30x off the tolerance), against the double formula on the same weights.
TEST(GCNConvCuda, Fp32MatchesPyGSemanticsInDouble) {
  TESSERA_REQUIRE_CUDA();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch has no CUDA in this build";
  const uint64_t s = testing::seed();
  const int64_t n = 300, e = 2400;
  const auto ei = random_edge_index(n, e, s);
  const auto x = torch::randn({n, 32}, torch::kDouble);
  nn::GCNConv conv(nn::GCNConvOptions(32, 64));
  {
    torch::NoGradGuard g;
    conv->bias.normal_();
  }
  const auto expected = pyg_propagate(torch::mm(x, conv->lin->weight.to(torch::kDouble).t()), ei,
                                      torch::ones({e}, torch::kDouble), 1.0) + conv->bias.to(torch::kDouble);
  conv->to(torch::kCUDA);
  const auto got = conv->forward(x.to(torch::kCUDA, torch::kFloat), ei.cuda()).to(torch::kCPU, torch::kDouble);
  EXPECT_TRUE(torch::allclose(got, expected, 2e-5, 2e-5)) << "seed " << s << ", max diff "
                                                          << (got - expected).abs().max().item<double>();
}

TEST(GCNConv, CacheIsKeyedByGraphIdentity) {
  const uint64_t s = testing::seed();
  const int64_t n = 64;
  auto a = random_edge_index(n, 400, s), b = random_edge_index(n, 400, s + 1);
  auto x = torch::randn({n, 5});
  nn::GCNConv cached(nn::GCNConvOptions(5, 3).cached(true));
  nn::GCNConv plain(5, 3);
  {
    torch::NoGradGuard g;
    plain->lin->weight.copy_(cached->lin->weight);
  }
  auto ga = pt::Graph::from_edge_index(a, {}, n), gb = pt::Graph::from_edge_index(b, {}, n);
  EXPECT_TRUE(torch::allclose(cached->forward(x, ga), plain->forward(x, ga)));
  EXPECT_TRUE(torch::allclose(cached->forward(x, gb), plain->forward(x, gb)));
  EXPECT_FALSE(torch::allclose(cached->forward(x, ga), cached->forward(x, gb)));
  // PyG's transductive cache for edge_index inputs: the first graph's normalization is reused.
  nn::GCNConv pyg_like(nn::GCNConvOptions(5, 3).cached(true));
  auto first = pyg_like->forward(x, a);
  EXPECT_TRUE(torch::allclose(pyg_like->forward(x, b), first));
}

TEST(GCNConv, BackwardReachesWeightsAndInputs) {
  const uint64_t s = testing::seed();
  auto ei = random_edge_index(50, 300, s);
  auto x = torch::randn({50, 6}, torch::requires_grad());
  nn::GCNConv conv(6, 4);
  conv->forward(x, ei).pow(2).sum().backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_GT(conv->lin->weight.grad().abs().sum().item<double>(), 0.0);
  EXPECT_GT(conv->bias.grad().abs().sum().item<double>(), 0.0);
}

// Three layers from 10 features to 3 classes.
nn::ModelConfig three_layers(int64_t hidden) {
  nn::ModelConfig c;
  c.in_channels = 10;
  c.out_channels = 3;
  c.hidden = hidden;
  c.layers = 3;
  return c;
}

TEST(ModelRegistry, GcnIsRegisteredAndUnknownNamesFail) {
  const auto c = three_layers(8);
  auto model = nn::make_model("gcn", c);
  auto g = pt::Graph::from_edge_index(random_edge_index(20, 60, testing::seed()), {}, 20);
  EXPECT_EQ(model->forward(torch::randn({20, 10}), g).sizes(), torch::IntArrayRef({20, 3}));
  EXPECT_EQ(model->named_parameters().size(), 6u);
  EXPECT_THROW(nn::make_model("no-such-model", c), Error);
}

TEST(ModelRegistry, AttentionModelsRoundTheHiddenWidthToTheirHeads) {
  // hidden 20: GATv2's 8 heads of 2 channels (16 wide), one head last; the Transformer's 4 heads
  // of 5, the last averaged over its heads.
  auto c = three_layers(20);
  auto g = pt::Graph::from_edge_index(random_edge_index(20, 60, testing::seed()), {}, 20);
  const std::map<std::string, std::map<std::string, std::vector<int64_t>>> want = {
      {"gatv2", {{"conv0.lin_l.weight", {16, 10}}, {"conv1.lin_l.weight", {16, 16}}, {"conv2.lin_l.weight", {3, 16}},
                 {"conv1.att", {1, 8, 2}}, {"conv2.att", {1, 1, 3}}}},
      {"transformer", {{"conv0.lin_query.weight", {20, 10}}, {"conv1.lin_key.weight", {20, 20}},
                       {"conv2.lin_value.weight", {12, 20}}, {"conv2.lin_skip.weight", {3, 20}}}}};
  for (const auto& [name, shapes] : want) {
    auto model = nn::make_model(name, c);
    const auto params = model->named_parameters();
    for (const auto& [param, shape] : shapes) {
      ASSERT_NE(params.find(param), nullptr) << name << ": " << param;
      EXPECT_EQ(params[param].sizes(), torch::IntArrayRef(shape)) << name << ": " << param;
    }
    model->train();
    const auto y = model->forward(torch::randn({20, 10}), g);
    EXPECT_EQ(y.sizes(), torch::IntArrayRef({20, 3})) << name;
    y.sum().backward();
    for (const auto& p : params) EXPECT_TRUE(p.value().grad().defined()) << name << ": " << p.key();
  }
  c.extra["heads"] = "0";
  EXPECT_THROW(nn::make_model("gatv2", c), Error);
  EXPECT_THROW(nn::make_model("transformer", c), Error);
}

}  // namespace
}  // namespace tessera
