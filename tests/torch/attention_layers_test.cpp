// tessera::nn::GATv2Conv / TransformerConv (C++) against PyG's semantics in plain libtorch (the
// formulas of tests/python/pyg_attention_reference.py), in double: outputs and the gradients of the
// node and edge features and every parameter, on homogeneous graphs and bipartite blocks (PyG's
// x = (x_src, x_dst)), through a pt::Graph and through edge_index; parameter names; misuse errors.
#include <ATen/Context.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/testing.hpp"
#include "tessera/core/error.hpp"
#include "tessera/tune/tuner.hpp"
#include "torch/outputs.hpp"
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
  Tensor edge_index;  // the edges in their input order
};
// n_src sources, n_dst targets (a bipartite block when they differ); edges among the first
// n_src - 2 sources and n_dst - 2 targets, so two of each have none.
Case random_block(int64_t n_src, int64_t n_dst, int64_t e, uint64_t seed) {
  torch::manual_seed(seed);
  auto ei = torch::stack({torch::randint(0, n_src - 2, {e}, torch::kLong), torch::randint(0, n_dst - 2, {e}, torch::kLong)});
  const auto self = torch::randint(0, std::min(n_src, n_dst) - 2, {4}, torch::kLong);  // four i -> i edges
  ei.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, 4)}, self.expand({2, 4}));
  ei = torch::cat({ei, ei.index({torch::indexing::Slice(), torch::indexing::Slice(4, 9)})}, 1);  // duplicates
  Case c;
  c.edge_index = ei;
  c.g = pt::Graph::from_edge_index(ei, {}, n_dst, n_src);
  const auto deg = (c.g.rowptr().slice(0, 1) - c.g.rowptr().slice(0, 0, -1)).to(torch::kLong);
  c.dst = torch::repeat_interleave(torch::arange(n_dst, torch::kLong), deg);
  c.src = c.g.col().to(torch::kLong);
  return c;
}
Case random_graph(int64_t n, int64_t e, uint64_t seed) { return random_block(n, n, e, seed); }
Case on_cuda(Case c) {
  c.g = pt::Graph::from_csr(c.g.rowptr().cuda(), c.g.col().cuda(), {}, c.g.cols());
  c.src = c.src.cuda();
  c.dst = c.dst.cuda();
  c.edge_index = c.edge_index.cuda();
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

// PyG GATv2Conv.forward on x = (x_src, x_dst): x_l = lin_l(x_src), x_r = lin_r(x_dst); with
// add_self_loops, remove self-loops and add one per node i < min(sources, targets), whose edge
// features (if any) are the mean of the node's remaining in-edge features; lin_edge inside the
// LeakyReLU; concat or mean over heads; + res(x_dst); + bias.
Tensor gatv2_oracle(nn::GATv2Conv& m, const Tensor& x_src, const Tensor& x_dst, Tensor src, Tensor dst, Tensor ea) {
  const auto& o = m->options;
  const int64_t H = o.heads(), C = o.out_channels(), n_dst = x_dst.size(0);
  if (o.add_self_loops()) {
    const int64_t n = std::min(x_src.size(0), n_dst);
    const auto keep = src.ne(dst);
    src = src.index({keep});
    dst = dst.index({keep});
    const auto loops = torch::arange(n, dst.options());
    if (ea.defined()) {
      ea = ea.index({keep});
      const auto total = torch::zeros({n_dst, ea.size(1)}, ea.options()).index_add(0, dst, ea).slice(0, 0, n);
      const auto count =
          torch::zeros({n_dst}, ea.options()).index_add(0, dst, torch::ones({dst.size(0)}, ea.options())).slice(0, 0, n);
      ea = torch::cat({ea, total / count.clamp_min(1).unsqueeze(1)});
    }
    src = torch::cat({src, loops});
    dst = torch::cat({dst, loops});
  }
  const auto xl = m->lin_l->forward(x_src).view({-1, H, C}), xr = m->lin_r->forward(x_dst).view({-1, H, C});
  const auto xj = xl.index_select(0, src);
  auto z = xj + xr.index_select(0, dst);
  if (ea.defined()) z = z + m->lin_edge->forward(ea).view({-1, H, C});
  const auto alpha = segment_softmax((torch::leaky_relu(z, o.negative_slope()) * m->att).sum(-1), dst, n_dst);
  auto out = torch::zeros_like(xr).index_add(0, dst, xj * alpha.unsqueeze(-1));
  out = o.concat() ? out.reshape({n_dst, H * C}) : out.mean(1);
  if (m->res) out = out + m->res->forward(x_dst);
  return m->bias.defined() ? out + m->bias : out;
}

// PyG TransformerConv.forward on x = (x_src, x_dst): q = lin_query(x_dst), k = lin_key(x_src),
// v = lin_value(x_src); e = lin_edge(edge_attr) (if any) added to k_j and v_j; concat or mean;
// root_weight adds lin_skip(x_dst), gated by beta.
Tensor transformer_oracle(nn::TransformerConv& m, const Tensor& x_src, const Tensor& x_dst, const Tensor& src,
                          const Tensor& dst, const Tensor& ea) {
  const auto& o = m->options;
  const int64_t H = o.heads(), C = o.out_channels(), n_dst = x_dst.size(0);
  const auto q = m->lin_query->forward(x_dst).view({-1, H, C});
  auto kj = m->lin_key->forward(x_src).view({-1, H, C}).index_select(0, src);
  auto vj = m->lin_value->forward(x_src).view({-1, H, C}).index_select(0, src);
  if (ea.defined()) {
    const auto e = m->lin_edge->forward(ea).view({-1, H, C});
    kj = kj + e;
    vj = vj + e;
  }
  const auto alpha = segment_softmax((q.index_select(0, dst) * kj).sum(-1) / std::sqrt(double(C)), dst, n_dst);
  auto out = torch::zeros_like(q).index_add(0, dst, vj * alpha.unsqueeze(-1));
  out = o.concat() ? out.reshape({n_dst, H * C}) : out.mean(1);
  if (!o.root_weight()) return out;
  const auto x_r = m->lin_skip->forward(x_dst);
  if (!m->lin_beta) return out + x_r;
  const auto b = torch::sigmoid(m->lin_beta->forward(torch::cat({out, x_r, out - x_r}, -1)));
  return b * x_r + (1 - b) * out;
}

// Output and the gradients of `inputs` (named, requiring grad) and every parameter of the module's
// call and of the oracle, for one random linear loss.
template <class M>
void expect_same(M& m, const std::vector<std::pair<std::string, Tensor>>& inputs, const std::function<Tensor()>& call,
                 const std::function<Tensor()>& oracle, const std::string& what = "") {
  const Tensor out = call();
  const Tensor w = torch::randn_like(out);
  std::vector<Tensor> wrt;
  std::vector<std::string> names;
  for (const auto& [name, t] : inputs) wrt.push_back(t), names.push_back(name);
  for (const auto& p : m->named_parameters()) wrt.push_back(p.value()), names.push_back(p.key());
  // allow_unused: a parameter the options leave out (lin_skip without root_weight, as PyG's) has
  // no gradient on either side.
  const std::vector<Tensor> got = torch::autograd::grad({(out * w).sum()}, wrt, {}, {}, false, true);
  const Tensor ref_out = oracle();
  const std::vector<Tensor> want = torch::autograd::grad({(ref_out * w).sum()}, wrt, {}, {}, false, true);
  ASSERT_EQ(out.sizes(), ref_out.sizes()) << what;
  EXPECT_TRUE(torch::allclose(out, ref_out, 1e-9, 1e-9)) << what << ": output, max diff "
                                                          << (out - ref_out).abs().max().item<double>();
  for (size_t i = 0; i < wrt.size(); ++i) {
    ASSERT_EQ(got[i].defined(), want[i].defined()) << what << ": gradient of " << names[i] << " on one side only";
    if (got[i].defined()) {
      EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-9, 1e-9))
          << what << ": gradient of " << names[i] << ", max diff " << (got[i] - want[i]).abs().max().item<double>();
    }
  }
}

// The homogeneous call with edge features (x [n, in], edge_attr [nnz, D] in c.g's entry order).
template <class M, class Oracle>
void expect_matches_oracle(M& m, const Case& c, int64_t in, int64_t D, Oracle oracle) {
  const auto opts = m->parameters()[0].options();  // the module's dtype and device
  auto x = torch::randn({c.g.rows(), in}, opts).requires_grad_();
  auto ea = torch::randn({c.g.nnz(), D}, opts).requires_grad_();
  expect_same(m, {{"x", x}, {"edge_attr", ea}}, [&] { return m->forward(x, c.g, ea); },
              [&] { return oracle(m, x, x, c.src, c.dst, ea); });
}

// The bipartite call (x_src [c.g.cols(), in_src], x_dst [c.g.rows(), in_dst], edge_attr when D > 0).
template <class M, class Oracle>
void expect_bipartite_matches_oracle(M& m, const Case& c, int64_t in_src, int64_t in_dst, int64_t D, Oracle oracle,
                                     const std::string& what) {
  const auto opts = m->parameters()[0].options();
  auto x_src = torch::randn({c.g.cols(), in_src}, opts).requires_grad_();
  auto x_dst = torch::randn({c.g.rows(), in_dst}, opts).requires_grad_();
  std::vector<std::pair<std::string, Tensor>> inputs = {{"x_src", x_src}, {"x_dst", x_dst}};
  Tensor ea;
  if (D > 0) inputs.emplace_back("edge_attr", ea = torch::randn({c.g.nnz(), D}, opts).requires_grad_());
  expect_same(m, inputs, [&] { return m->forward(x_src, x_dst, c.g, ea); },
              [&] { return oracle(m, x_src, x_dst, c.src, c.dst, ea); }, what);
}

TEST(AttentionLayers, GATv2EdgeFeaturesMatchPygSemantics) {
  const uint64_t seed = tessera::testing::seed();
  const Case c = random_graph(30, 150, seed);
  nn::GATv2Conv m(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  const auto names = m->named_parameters().keys();
  EXPECT_NE(std::find(names.begin(), names.end(), "lin_edge.weight"), names.end());
  EXPECT_EQ(m->lin_edge->weight.sizes(), (std::vector<int64_t>{15, 4}));
  expect_matches_oracle(m, c, 6, 4, gatv2_oracle);
}

TEST(AttentionLayers, TransformerEdgeFeaturesMatchPygSemantics) {
  const uint64_t seed = tessera::testing::seed();
  const Case c = random_graph(30, 150, seed);
  nn::TransformerConv m(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  const auto names = m->named_parameters().keys();
  EXPECT_NE(std::find(names.begin(), names.end(), "lin_edge.weight"), names.end());
  expect_matches_oracle(m, c, 6, 4, transformer_oracle);
}

TEST(AttentionLayers, Int32GraphsKeepTheirTransposeInInt32AndMatchTheOracle) {
  const uint64_t seed = tessera::testing::seed();
  Case c = random_graph(30, 150, seed);
  c.g = pt::Graph::from_csr(c.g.rowptr().to(torch::kInt), c.g.col().to(torch::kInt), {}, c.g.cols());
  EXPECT_EQ(c.g.transpose().perm.scalar_type(), torch::kInt);  // read as is by the kernels
  nn::TransformerConv m(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  expect_matches_oracle(m, c, 6, 4, transformer_oracle);
}

TEST(AttentionLayers, GATv2OnAnInt32GraphMatchesTheOracle) {  // the loops' selection matrix in int32
  const uint64_t seed = tessera::testing::seed();
  Case c = random_graph(30, 150, seed);
  c.g = pt::Graph::from_csr(c.g.rowptr().to(torch::kInt), c.g.col().to(torch::kInt), {}, c.g.cols());
  nn::GATv2Conv m(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  m->to(torch::kDouble);
  expect_matches_oracle(m, c, 6, 4, gatv2_oracle);
}

// Bipartite blocks (PyG's x = (x_src, x_dst)): fewer targets than sources (a sampled block) with and
// without edge features and self-loops, more targets than sources, and every option that reads
// x_dst (res, concat = false, share_weights on equal widths).
void expect_gatv2_blocks_match(const torch::Device& device, uint64_t seed) {
  const auto dev = [&](Case c) { return device.is_cuda() ? on_cuda(std::move(c)) : c; };
  const Case fewer = dev(random_block(40, 25, 200, seed)), more = dev(random_block(15, 30, 120, seed + 1));
  struct Config {
    const Case* c;
    nn::GATv2ConvOptions o;
    int64_t D;
    std::string what;
  };
  const std::vector<Config> configs = {
      {&fewer, nn::GATv2ConvOptions(6, 5).in_channels_dst(4).heads(3).edge_dim(4).residual(true), 4, "edge features, res"},
      {&fewer, nn::GATv2ConvOptions(6, 5).in_channels_dst(4).heads(2).concat(false), 0, "mean over heads"},
      {&fewer, nn::GATv2ConvOptions(6, 5).in_channels_dst(4).heads(2).add_self_loops(false).bias(false), 0, "no loops"},
      {&fewer, nn::GATv2ConvOptions(6, 3).heads(2).share_weights(true).residual(true), 0, "share_weights"},
      {&more, nn::GATv2ConvOptions(6, 5).in_channels_dst(4).heads(3), 0, "more targets than sources"},
      {&more, nn::GATv2ConvOptions(6, 5).in_channels_dst(4).heads(3).edge_dim(2), 2,
       "more targets than sources, edge features (the loops' mean leaves out targets past them)"}};
  for (const auto& cfg : configs) {
    nn::GATv2Conv m(cfg.o);
    m->to(device, torch::kDouble);
    expect_bipartite_matches_oracle(m, *cfg.c, cfg.o.in_channels(), m->in_channels_dst(), cfg.D, gatv2_oracle,
                                    cfg.what + ", seed " + std::to_string(seed));
  }
}

void expect_transformer_blocks_match(const torch::Device& device, uint64_t seed) {
  const Case c = device.is_cuda() ? on_cuda(random_block(40, 25, 200, seed)) : random_block(40, 25, 200, seed);
  const std::vector<std::tuple<nn::TransformerConvOptions, int64_t, std::string>> configs = {
      {nn::TransformerConvOptions(6, 5).in_channels_dst(4).heads(3).edge_dim(4).beta(true), 4, "edge features, beta"},
      {nn::TransformerConvOptions(6, 5).in_channels_dst(4).heads(2).concat(false), 0, "mean over heads"},
      {nn::TransformerConvOptions(6, 5).in_channels_dst(4).heads(2).root_weight(false), 0, "no root weight"}};
  for (const auto& [o, D, what] : configs) {
    nn::TransformerConv m(o);
    m->to(device, torch::kDouble);
    expect_bipartite_matches_oracle(m, c, 6, 4, D, transformer_oracle, what + ", seed " + std::to_string(seed));
  }
}

TEST(AttentionLayers, GATv2BipartiteMatchesPygSemantics) {
  expect_gatv2_blocks_match(torch::kCPU, tessera::testing::seed());
}

TEST(AttentionLayers, TransformerBipartiteMatchesPygSemantics) {
  expect_transformer_blocks_match(torch::kCPU, tessera::testing::seed());
}

TEST(AttentionLayers, BipartiteParametersArePyGs) {
  nn::GATv2Conv gat(nn::GATv2ConvOptions(6, 5).in_channels_dst(4).heads(3).residual(true));
  auto p = gat->named_parameters();
  EXPECT_EQ(p["lin_l.weight"].sizes(), torch::IntArrayRef({15, 6}));
  EXPECT_EQ(p["lin_r.weight"].sizes(), torch::IntArrayRef({15, 4}));
  EXPECT_EQ(p["res.weight"].sizes(), torch::IntArrayRef({15, 4}));
  nn::TransformerConv tr(nn::TransformerConvOptions(6, 5).in_channels_dst(4).heads(3));
  p = tr->named_parameters();
  EXPECT_EQ(p["lin_key.weight"].sizes(), torch::IntArrayRef({15, 6}));
  EXPECT_EQ(p["lin_value.weight"].sizes(), torch::IntArrayRef({15, 6}));
  EXPECT_EQ(p["lin_query.weight"].sizes(), torch::IntArrayRef({15, 4}));
  EXPECT_EQ(p["lin_skip.weight"].sizes(), torch::IntArrayRef({15, 4}));
  std::ostringstream os;
  gat->pretty_print(os);
  tr->pretty_print(os << " ");
  EXPECT_EQ(os.str(), "tessera::nn::GATv2Conv((6, 4), 5, heads=3) tessera::nn::TransformerConv((6, 4), 5, heads=3)");
}

// forward(x, edge_index, edge_attr) takes edge_attr in edge_index's order, as PyG's call: the oracle
// walks the edges in that order.
TEST(AttentionLayers, EdgeIndexCallsTakeEdgeAttrInEdgeIndexOrder) {
  const uint64_t seed = tessera::testing::seed();
  const Case c = random_graph(30, 150, seed);
  const auto ei = c.edge_index;
  auto x = torch::randn({30, 6}, torch::kDouble).requires_grad_();
  auto ea = torch::randn({ei.size(1), 4}, torch::kDouble).requires_grad_();
  nn::GATv2Conv gat(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  gat->to(torch::kDouble);
  expect_same(gat, {{"x", x}, {"edge_attr", ea}}, [&] { return gat->forward(x, ei, ea); },
              [&] { return gatv2_oracle(gat, x, x, ei[0], ei[1], ea); }, "GATv2Conv, seed " + std::to_string(seed));
  nn::TransformerConv tr(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  tr->to(torch::kDouble);
  expect_same(tr, {{"x", x}, {"edge_attr", ea}}, [&] { return tr->forward(x, ei, ea); },
              [&] { return transformer_oracle(tr, x, x, ei[0], ei[1], ea); }, "TransformerConv, seed " + std::to_string(seed));
  nn::GATv2Conv plain(nn::GATv2ConvOptions(6, 5).heads(3));
  plain->to(torch::kDouble);
  EXPECT_TRUE(torch::allclose(plain->forward(x, ei), plain->forward(x, c.g), 1e-12, 1e-12));
  // The pair behind it, for a graph built once.
  const auto [g, ea_entries] = pt::graph_and_edge_attr(ei, ea, 30);
  EXPECT_TRUE(torch::equal(g.col(), c.g.col()));
  EXPECT_TRUE(torch::allclose(gat->forward(x, g, ea_entries), gat->forward(x, ei, ea), 1e-12, 1e-12));
}

TEST(AttentionLayers, MismatchedBipartiteInputsAreRefused) {
  const auto refused = [](auto&& call, const std::string& says) { testing::expect_error_saying(call, says); };
  const Case c = random_block(20, 10, 60, tessera::testing::seed());
  const auto x_src = torch::randn({20, 6}), x_dst = torch::randn({10, 4});
  nn::GATv2Conv gat(nn::GATv2ConvOptions(6, 3).in_channels_dst(4).heads(2));
  nn::TransformerConv tr(nn::TransformerConvOptions(6, 3).in_channels_dst(4).heads(2));
  refused([&] { nn::GATv2Conv(nn::GATv2ConvOptions(6, 3).in_channels_dst(4).share_weights(true)); }, "share_weights");
  refused([&] { nn::GATv2Conv(nn::GATv2ConvOptions(6, 3).in_channels_dst(0)); }, "in_channels_dst must be positive");
  refused([&] { nn::TransformerConv(nn::TransformerConvOptions(6, 3).in_channels_dst(-2)); }, "in_channels_dst");
  refused([&] { gat->forward(x_src, random_graph(20, 60, 1).g); }, "bipartite input");
  refused([&] { tr->forward(x_src, random_graph(20, 60, 1).g); }, "bipartite input");
  refused([&] { gat->forward(x_src, torch::randn({10, 6}), c.g); }, "in_channels_dst");
  refused([&] { tr->forward(x_src, torch::Tensor(), c.g); }, "x_dst");
  refused([&] { gat->forward(x_src, x_dst.narrow(0, 0, 9), c.g); }, "target nodes");
  refused([&] { tr->forward(x_src.narrow(0, 0, 19), x_dst, c.g); }, "source nodes");
  refused([&] { gat->forward(torch::randn({20, 4}), x_dst, c.g); }, "in_channels");
  refused([&] { gat->forward(torch::randn({30, 6}), c.edge_index, torch::randn({5, 2})); }, "one row per edge");
  EXPECT_EQ(gat->forward(x_src, x_dst, c.g).sizes(), torch::IntArrayRef({10, 6}));
  EXPECT_EQ(tr->forward(x_src, x_dst, c.g).sizes(), torch::IntArrayRef({10, 6}));
}

// Projections of large CPU outputs go through one tessera::linears op (projections.hpp: the Python
// layers' rule, outputs on huge pages): a sampled block whose 4096 sources' projection is 4 MiB in
// double, its 40 targets' small, so both paths run in one layer.
TEST(AttentionLayers, LargeCpuProjectionsMatchTheOracle) {
  if (pt::huge_output_min_bytes() > (int64_t(4) << 20)) GTEST_SKIP() << "TESSERA_CPU_HUGE_OUTPUTS=0";
  const uint64_t seed = tessera::testing::seed();
  const Case c = random_block(4096, 40, 600, seed);
  nn::GATv2Conv gat(nn::GATv2ConvOptions(8, 32).in_channels_dst(4).heads(4).residual(true));
  gat->to(torch::kDouble);
  expect_bipartite_matches_oracle(gat, c, 8, 4, 0, gatv2_oracle, "GATv2Conv, seed " + std::to_string(seed));
  nn::TransformerConv tr(nn::TransformerConvOptions(8, 32).in_channels_dst(4).heads(4).beta(true));
  tr->to(torch::kDouble);
  expect_bipartite_matches_oracle(tr, c, 8, 4, 0, transformer_oracle, "TransformerConv, seed " + std::to_string(seed));
}

// The folded form (no q, k or v; transformer.cpp's folded_attention), which the CPU takes where the
// head width exceeds the input width (on any graph; where they are equal, on large graphs only):
// every option that reads it, on blocks with targets that have no entries (no b_v there), against
// the oracle; b_k's gradient is exactly zero (the softmax cancels
// q_i . b_k; PyG's is rounding noise), which also shows that the folded form ran. Its attention
// weights are the softmax of the unfolded logits.
TEST(AttentionLayers, TransformerFoldedWhereHeadsAreWiderThanTheInput) {
  const uint64_t seed = tessera::testing::seed();
  const std::string at_seed = ", seed " + std::to_string(seed);
  constexpr int64_t n = 600;
  const Case homo = random_graph(n, 4200, seed), block = random_block(500, 300, 4200, seed + 1);
  nn::TransformerConv plain(nn::TransformerConvOptions(4, 7).heads(3));
  plain->to(torch::kDouble);
  auto x_in = torch::randn({n, 4}, torch::kDouble).requires_grad_();
  expect_same(plain, {{"x", x_in}}, [&] { return plain->forward(x_in, homo.g); },
              [&] { return transformer_oracle(plain, x_in, x_in, homo.src, homo.dst, Tensor()); }, "homogeneous" + at_seed);
  // TESSERA_TRANSFORMER_FOLD=0 or 1 forces the form (A/B runs): the rule's own checks then skip.
  const char* forced_env = std::getenv("TESSERA_TRANSFORMER_FOLD");
  const std::string forced = forced_env ? forced_env : "";
  const Tensor b_k_grad = torch::autograd::grad({plain->forward(x_in, homo.g).sum()}, {plain->lin_key->bias})[0];
  if (forced != "0") {
    EXPECT_EQ(b_k_grad.abs().max().item<double>(), 0.0) << "folded: b_k's gradient" << at_seed;
  }
  const std::vector<std::pair<nn::TransformerConvOptions, std::string>> configs = {
      {nn::TransformerConvOptions(6, 8).in_channels_dst(4).heads(3).beta(true), "beta"},
      {nn::TransformerConvOptions(6, 8).in_channels_dst(4).heads(2).concat(false), "mean over heads"},
      {nn::TransformerConvOptions(6, 9).in_channels_dst(4).heads(2).root_weight(false), "no root weight"}};
  for (const auto& [o, what] : configs) {
    nn::TransformerConv m(o);
    m->to(torch::kDouble);
    expect_bipartite_matches_oracle(m, block, 6, 4, 0, transformer_oracle, what + at_seed);
  }
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({n, 4}, torch::kDouble);
  const nn::AttentionWeights a = plain->forward_with_attention(x, homo.g);
  EXPECT_TRUE(torch::allclose(a.out, plain->forward(x, homo.g), 1e-12, 1e-12)) << "output" << at_seed;
  const auto q = plain->lin_query->forward(x).view({-1, 3, 7}), k = plain->lin_key->forward(x).view({-1, 3, 7});
  const auto scores = (q.index_select(0, homo.dst) * k.index_select(0, homo.src)).sum(-1) / std::sqrt(7.0);
  EXPECT_TRUE(torch::allclose(a.alpha, segment_softmax(scores, homo.dst, n), 1e-12, 1e-12)) << "alpha" << at_seed;
  // Heads as wide as the input fold on the CPU only on graphs of 2^18 entries and more: on a small
  // graph the unfolded form runs, and b_k gets the softmax's rounding noise.
  if (forced == "1") return;
  const Case small = random_graph(30, 150, seed + 2);
  const auto x_small = torch::randn({30, 4}, torch::kDouble);
  nn::TransformerConv equal(nn::TransformerConvOptions(4, 4).heads(3));
  equal->to(torch::kDouble);
  torch::AutoGradMode grad(true);
  const Tensor noise = torch::autograd::grad({equal->forward(x_small, small.g).sum()}, {equal->lin_key->bias})[0];
  EXPECT_GT(noise.abs().max().item<double>(), 0.0) << "C = K on a small graph: unfolded" << at_seed;
  if (forced == "0") return;
  const Tensor zero = torch::autograd::grad({plain->forward(x_small, small.g).sum()}, {plain->lin_key->bias})[0];
  EXPECT_EQ(zero.abs().max().item<double>(), 0.0) << "C > K on a small graph: folded" << at_seed;
}

// The CUDA path of the same layers (fused kernels in double; the GATv2 loops' features gathered by
// the selection SpMM on the device), homogeneous with edge features and on bipartite blocks.
TEST(AttentionLayersCuda, MatchPygSemantics) {
  TESSERA_REQUIRE_CUDA();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch has no CUDA in this build";
  const uint64_t seed = tessera::testing::seed();
  const Case c = on_cuda(random_graph(300, 2000, seed));
  nn::GATv2Conv gat(nn::GATv2ConvOptions(6, 5).heads(3).edge_dim(4));
  gat->to(torch::kCUDA, torch::kDouble);
  expect_matches_oracle(gat, c, 6, 4, gatv2_oracle);
  nn::TransformerConv tr(nn::TransformerConvOptions(6, 5).heads(3).edge_dim(4));
  tr->to(torch::kCUDA, torch::kDouble);
  expect_matches_oracle(tr, c, 6, 4, transformer_oracle);
  expect_gatv2_blocks_match(torch::kCUDA, seed);
  expect_transformer_blocks_match(torch::kCUDA, seed);
}

// forward_with_attention: PyG's return_attention_weights. The output is forward's; alpha is the softmax
// of the layer's logits over the graph it returns (GATv2: the input's self-loops removed, one per
// node added; the Transformer: the input graph itself), in that graph's entry order.
TEST(AttentionLayers, AttentionWeightsAreTheSoftmaxOverTheReturnedGraph) {
  const uint64_t seed = tessera::testing::seed();
  const std::string at_seed = ", seed " + std::to_string(seed);
  const Case c = random_graph(30, 150, seed);
  const auto entries = [](const pt::Graph& g) {  // (source, target) of each entry
    const auto deg = (g.rowptr().slice(0, 1) - g.rowptr().slice(0, 0, -1)).to(torch::kLong);
    return std::make_pair(g.col().to(torch::kLong), torch::repeat_interleave(torch::arange(g.rows()), deg));
  };
  torch::NoGradGuard no_grad;
  nn::GATv2Conv gat(nn::GATv2ConvOptions(6, 5).heads(3));
  gat->to(torch::kDouble);
  const auto x = torch::randn({30, 6}, torch::kDouble);
  const nn::AttentionWeights a = gat->forward_with_attention(x, c.g);
  EXPECT_TRUE(torch::allclose(a.out, gat->forward(x, c.g), 1e-12, 1e-12)) << "GATv2 output" << at_seed;
  const auto [src, dst] = entries(a.graph);
  EXPECT_EQ(src.eq(dst).sum().item<int64_t>(), 30) << "one self-loop per node" << at_seed;
  EXPECT_EQ(a.graph.nnz(), c.src.ne(c.dst).sum().item<int64_t>() + 30) << at_seed;
  const auto xl = gat->lin_l->forward(x).view({-1, 3, 5}), xr = gat->lin_r->forward(x).view({-1, 3, 5});
  const auto logits = (torch::leaky_relu(xl.index_select(0, src) + xr.index_select(0, dst), 0.2) * gat->att).sum(-1);
  EXPECT_TRUE(torch::allclose(a.alpha, segment_softmax(logits, dst, 30), 1e-12, 1e-12)) << "GATv2 alpha" << at_seed;

  const Case b = random_block(40, 25, 200, seed);
  nn::TransformerConv tr(nn::TransformerConvOptions(6, 5).in_channels_dst(4).heads(3));
  tr->to(torch::kDouble);
  const auto x_src = torch::randn({40, 6}, torch::kDouble), x_dst = torch::randn({25, 4}, torch::kDouble);
  const nn::AttentionWeights t = tr->forward_with_attention(x_src, x_dst, b.g);
  EXPECT_TRUE(torch::allclose(t.out, tr->forward(x_src, x_dst, b.g), 1e-12, 1e-12)) << "Transformer output" << at_seed;
  EXPECT_EQ(t.graph.id(), b.g.id());
  const auto q = tr->lin_query->forward(x_dst).view({-1, 3, 5}), k = tr->lin_key->forward(x_src).view({-1, 3, 5});
  const auto scores = (q.index_select(0, b.dst) * k.index_select(0, b.src)).sum(-1) / std::sqrt(5.0);
  EXPECT_TRUE(torch::allclose(t.alpha, segment_softmax(scores, b.dst, 25), 1e-12, 1e-12)) << "Transformer alpha" << at_seed;
}

// fp32 on CUDA: the projections on tessera's tf32x3 tensor-core kernel (fp32-level error; TF32
// alone would miss the tolerance by ~30x), unless the user allowed TF32 (then cuBLAS's, as asked).
// Against the oracle in double on the same weights.
template <class M, class Oracle>
void expect_fp32_close(M& m, const Case& c, int64_t in, int64_t D, Oracle oracle, double tol, const std::string& what) {
  m->to(torch::kCUDA, torch::kFloat);
  const auto x = torch::randn({c.g.rows(), in}, torch::dtype(torch::kFloat).device(torch::kCUDA));
  const auto ea = torch::randn({c.g.nnz(), D}, x.options());
  const Tensor out = m->forward(x, c.g, ea).to(torch::kDouble);
  M m64(std::dynamic_pointer_cast<typename M::ContainedType>(m->clone()));
  m64->to(torch::kDouble);
  const Tensor ref = oracle(m64, x.to(torch::kDouble), x.to(torch::kDouble), c.src, c.dst, ea.to(torch::kDouble));
  EXPECT_TRUE(torch::allclose(out, ref, tol, tol)) << what << ": max diff " << (out - ref).abs().max().item<double>();
  // Without autograd too (the Transformer's skip then made with q, k and v, added in the attention's write).
  torch::NoGradGuard no_grad;
  const Tensor out_ng = m->forward(x, c.g, ea).to(torch::kDouble);
  EXPECT_TRUE(torch::allclose(out_ng, ref, tol, tol)) << what << " without autograd: max diff "
                                                      << (out_ng - ref).abs().max().item<double>();
}

TEST(AttentionLayersCuda, Fp32ProjectionsOnTensorCores) {
  TESSERA_REQUIRE_CUDA();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "torch has no CUDA in this build";
  const uint64_t seed = tessera::testing::seed();
  const Case c = on_cuda(random_graph(300, 2000, seed));
  const bool tf32 = at::globalContext().allowTF32CuBLAS();
  for (const bool allow : {false, true}) {
    at::globalContext().setAllowTF32CuBLAS(allow);
    const double tol = allow ? 2e-2 : 2e-5;
    const std::string what = std::string(allow ? "TF32 allowed" : "fp32") + ", seed " + std::to_string(seed);
    torch::manual_seed(seed);
    nn::GATv2Conv gat(nn::GATv2ConvOptions(32, 16).heads(4).edge_dim(4).residual(true));
    expect_fp32_close(gat, c, 32, 4, gatv2_oracle, tol, "GATv2Conv, " + what);
    nn::TransformerConv tr(nn::TransformerConvOptions(32, 16).heads(4).edge_dim(4));
    expect_fp32_close(tr, c, 32, 4, transformer_oracle, tol, "TransformerConv, " + what);
  }
  at::globalContext().setAllowTF32CuBLAS(tf32);
  bool linear_ran = false;  // tessera's projection records its variant choice
  for (const auto& [name, choice] : tune::recorded_choices()) linear_ran = linear_ran || name.rfind("linear ", 0) == 0;
  EXPECT_TRUE(linear_ran) << "no tessera::linear variant was chosen";
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
