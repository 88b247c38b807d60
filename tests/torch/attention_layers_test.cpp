// tessera::nn::GATv2Conv / TransformerConv (C++) with edge features against PyG's semantics in
// plain libtorch (the formulas of tests/python/pyg_attention_reference.py), in double: outputs and
// the gradients of x, edge_attr and every parameter; parameter names; misuse errors.
#include <torch/torch.h>

#include <limits>

#include "support/testing.hpp"
#include "tessera/torch/gatv2.hpp"
#include "tessera/torch/transformer.hpp"

namespace tessera {
namespace {

using torch::Tensor;

// A graph with duplicate edges, self-loops and two isolated nodes, and its entries' (source,
// target) in the Graph's entry order (the order edge_attr rows follow).
struct Case {
  pt::Graph g;
  Tensor src, dst;
};
Case random_graph(int64_t n, int64_t e, uint64_t seed) {
  torch::manual_seed(seed);
  auto ei = torch::randint(0, n - 2, {2, e}, torch::kLong);
  ei.index_put_({1, torch::indexing::Slice(0, 4)}, ei.index({0, torch::indexing::Slice(0, 4)}));  // loops
  ei = torch::cat({ei, ei.index({torch::indexing::Slice(), torch::indexing::Slice(4, 9)})}, 1);    // duplicates
  Case c;
  c.g = pt::Graph::from_edge_index(ei, {}, n);
  const auto deg = (c.g.rowptr().slice(0, 1) - c.g.rowptr().slice(0, 0, -1)).to(torch::kLong);
  c.dst = torch::repeat_interleave(torch::arange(n, torch::kLong), deg);
  c.src = c.g.col().to(torch::kLong);
  return c;
}

Tensor segment_softmax(const Tensor& logits, const Tensor& index, int64_t n) {
  const auto idx = index.view({-1, 1}).expand_as(logits);
  auto m = torch::full({n, logits.size(1)}, -std::numeric_limits<double>::infinity(), logits.options());
  m = m.scatter_reduce(0, idx, logits.detach(), "amax", true);
  const auto e = (logits - m.index_select(0, index)).exp();
  const auto s = torch::zeros({n, logits.size(1)}, logits.options()).index_add(0, index, e);
  return e / (s.index_select(0, index) + 1e-16);
}

// PyG GATv2Conv.forward with edge features: remove self-loops, add one per node whose features
// are the mean of the node's remaining in-edge features, lin_edge inside the LeakyReLU.
Tensor gatv2_oracle(nn::GATv2Conv& m, const Tensor& x, Tensor src, Tensor dst, Tensor ea) {
  const int64_t H = m->options.heads(), C = m->options.out_channels(), n = x.size(0);
  const auto keep = src.ne(dst);
  src = src.index({keep});
  dst = dst.index({keep});
  ea = ea.index({keep});
  const auto total = torch::zeros({n, ea.size(1)}, ea.options()).index_add(0, dst, ea);
  const auto count = torch::zeros({n}, ea.options()).index_add(0, dst, torch::ones({dst.size(0)}, ea.options()));
  const auto loops = torch::arange(n, dst.options());
  src = torch::cat({src, loops});
  dst = torch::cat({dst, loops});
  ea = torch::cat({ea, total / count.clamp_min(1).unsqueeze(1)});
  const auto xl = m->lin_l->forward(x).view({-1, H, C}), xr = m->lin_r->forward(x).view({-1, H, C});
  const auto xj = xl.index_select(0, src);
  const auto z = torch::leaky_relu(xj + xr.index_select(0, dst) + m->lin_edge->forward(ea).view({-1, H, C}),
                                   m->options.negative_slope());
  const auto alpha = segment_softmax((z * m->att).sum(-1), dst, n);
  auto out = torch::zeros_like(xr).index_add(0, dst, xj * alpha.unsqueeze(-1)).reshape({n, H * C});
  return out + m->bias;
}

// PyG TransformerConv.forward with edge features: e = lin_edge(edge_attr) added to k_j and v_j.
Tensor transformer_oracle(nn::TransformerConv& m, const Tensor& x, const Tensor& src, const Tensor& dst,
                          const Tensor& ea) {
  const int64_t H = m->options.heads(), C = m->options.out_channels(), n = x.size(0);
  const auto q = m->lin_query->forward(x).view({-1, H, C}), k = m->lin_key->forward(x).view({-1, H, C}),
             v = m->lin_value->forward(x).view({-1, H, C}), e = m->lin_edge->forward(ea).view({-1, H, C});
  const auto logits = (q.index_select(0, dst) * (k.index_select(0, src) + e)).sum(-1) / std::sqrt(double(C));
  const auto alpha = segment_softmax(logits, dst, n);
  auto out = torch::zeros_like(q).index_add(0, dst, (v.index_select(0, src) + e) * alpha.unsqueeze(-1));
  return out.reshape({n, H * C}) + m->lin_skip->forward(x);
}

// Output and every gradient (x, edge_attr, parameters) of module and oracle for one loss.
template <class M, class Oracle>
void expect_matches_oracle(M& m, const Case& c, int64_t in, int64_t D, Oracle oracle) {
  const int64_t n = c.g.rows();
  const auto opts = m->parameters()[0].options();  // the module's dtype and device
  auto x = torch::randn({n, in}, opts).requires_grad_();
  auto ea = torch::randn({c.g.nnz(), D}, opts).requires_grad_();
  const Tensor out = m->forward(x, c.g, ea);
  const Tensor w = torch::randn_like(out);
  const auto params = m->named_parameters();
  std::vector<Tensor> inputs = {x, ea};
  for (const auto& p : params) inputs.push_back(p.value());
  const std::vector<Tensor> got = torch::autograd::grad({(out * w).sum()}, inputs);
  const Tensor ref_out = oracle(m, x, c.src, c.dst, ea);
  const std::vector<Tensor> want = torch::autograd::grad({(ref_out * w).sum()}, inputs);
  EXPECT_TRUE(torch::allclose(out, ref_out, 1e-9, 1e-9)) << "output, max diff " << (out - ref_out).abs().max().item<double>();
  const char* names[] = {"x", "edge_attr"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string what = i < 2 ? names[i] : params[i - 2].key();
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-9, 1e-9))
        << "gradient of " << what << ", max diff " << (got[i] - want[i]).abs().max().item<double>();
  }
}

TEST(AttentionLayers, GATv2EdgeFeaturesMatchPygSemantics) {
  const uint64_t seed = tessera::testing::seed();
  const Case c = random_graph(30, 150, seed);
  nn::GATv2Conv m(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  const auto names = m->named_parameters().keys();
  EXPECT_NE(std::find(names.begin(), names.end(), "lin_edge.weight"), names.end());
  EXPECT_EQ(m->lin_edge->weight.sizes(), (std::vector<int64_t>{15, 4}));
  expect_matches_oracle(m, c, 6, 4, [](nn::GATv2Conv& mm, const Tensor& x, const Tensor& s, const Tensor& d,
                                        const Tensor& ea) { return gatv2_oracle(mm, x, s, d, ea); });
}

TEST(AttentionLayers, TransformerEdgeFeaturesMatchPygSemantics) {
  const uint64_t seed = tessera::testing::seed();
  const Case c = random_graph(30, 150, seed);
  nn::TransformerConv m(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  const auto names = m->named_parameters().keys();
  EXPECT_NE(std::find(names.begin(), names.end(), "lin_edge.weight"), names.end());
  expect_matches_oracle(m, c, 6, 4, [](nn::TransformerConv& mm, const Tensor& x, const Tensor& s, const Tensor& d,
                                        const Tensor& ea) { return transformer_oracle(mm, x, s, d, ea); });
}

TEST(AttentionLayers, Int32GraphsKeepTheirTransposeInInt32AndMatchTheOracle) {
  const uint64_t seed = tessera::testing::seed();
  Case c = random_graph(30, 150, seed);
  c.g = pt::Graph::from_csr(c.g.rowptr().to(torch::kInt), c.g.col().to(torch::kInt), {}, c.g.cols());
  EXPECT_EQ(c.g.transpose().perm.scalar_type(), torch::kInt);  // read as is by the kernels
  nn::TransformerConv m(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  expect_matches_oracle(m, c, 6, 4, [](nn::TransformerConv& mm, const Tensor& x, const Tensor& s, const Tensor& d,
                                        const Tensor& ea) { return transformer_oracle(mm, x, s, d, ea); });
}

TEST(AttentionLayers, GATv2OnAnInt32GraphMatchesTheOracle) {  // the loops' selection matrix in int32
  const uint64_t seed = tessera::testing::seed();
  Case c = random_graph(30, 150, seed);
  c.g = pt::Graph::from_csr(c.g.rowptr().to(torch::kInt), c.g.col().to(torch::kInt), {}, c.g.cols());
  nn::GATv2Conv m(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  expect_matches_oracle(m, c, 6, 4, [](nn::GATv2Conv& mm, const Tensor& x, const Tensor& s, const Tensor& d,
                                        const Tensor& ea) { return gatv2_oracle(mm, x, s, d, ea); });
}

// The CUDA path of the same layers (fused kernels in double; the GATv2 loops' features gathered by
// the selection SpMM on the device).
TEST(AttentionLayersCuda, EdgeFeaturesMatchPygSemantics) {
  TESSERA_REQUIRE_CUDA();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch has no CUDA in this build";
  const uint64_t seed = tessera::testing::seed();
  Case c = random_graph(300, 2000, seed);
  c.g = pt::Graph::from_csr(c.g.rowptr().cuda(), c.g.col().cuda(), {}, c.g.cols());
  c.src = c.src.cuda();
  c.dst = c.dst.cuda();
  nn::GATv2Conv gat(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  gat->to(torch::kCUDA, torch::kDouble);
  expect_matches_oracle(gat, c, 6, 4, [](nn::GATv2Conv& mm, const Tensor& x, const Tensor& s, const Tensor& d,
                                          const Tensor& ea) { return gatv2_oracle(mm, x, s, d, ea); });
  nn::TransformerConv tr(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  tr->to(torch::kCUDA, torch::kDouble);
  expect_matches_oracle(tr, c, 6, 4, [](nn::TransformerConv& mm, const Tensor& x, const Tensor& s, const Tensor& d,
                                         const Tensor& ea) { return transformer_oracle(mm, x, s, d, ea); });
}

TEST(AttentionLayers, EdgeFeatureMisuseRaisesErrors) {
  const Case c = random_graph(12, 40, tessera::testing::seed());
  const auto x = torch::randn({12, 4});
  nn::GATv2Conv with(nn::GATv2ConvOptions(4, 3).edge_dim(2)), without(nn::GATv2ConvOptions(4, 3));
  EXPECT_THROW(with->forward(x, c.g), Error);                                       // edge_attr missing
  EXPECT_THROW(without->forward(x, c.g, torch::randn({c.g.nnz(), 2})), Error);      // no edge_dim
  EXPECT_THROW(with->forward(x, c.g, torch::randn({c.g.nnz() - 1, 2})), Error);     // rows
  EXPECT_THROW(with->forward(x, c.g, torch::randn({c.g.nnz(), 3})), Error);         // width
  EXPECT_THROW(nn::GATv2Conv(nn::GATv2ConvOptions(4, 3).edge_dim(2).fill_value("median")), Error);
  nn::TransformerConv t(nn::TransformerConvOptions(4, 3).edge_dim(2));
  EXPECT_THROW(t->forward(x, c.g), Error);
  EXPECT_EQ(with->forward(x, c.g, torch::randn({c.g.nnz(), 2})).sizes(), (std::vector<int64_t>{12, 3}));
  EXPECT_EQ(t->forward(x, c.g, torch::randn({c.g.nnz(), 2})).sizes(), (std::vector<int64_t>{12, 3}));
}

}  // namespace
}  // namespace tessera
