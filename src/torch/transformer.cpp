// tessera::nn::TransformerConv and the "transformer" model of `tessera train`.
#include "tessera/torch/transformer.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "attention_op.hpp"
#include "autocast.hpp"
#include "layer_inputs.hpp"
#include "projections.hpp"
#include "tessera/core/error.hpp"
#include "tessera/torch/models.hpp"

namespace tessera::nn {

TransformerConvImpl::TransformerConvImpl(const TransformerConvOptions& opts) : options(opts) { reset(); }

int64_t TransformerConvImpl::in_channels_dst() const {
  return pt::targets_width("TransformerConv", options.in_channels(), options.in_channels_dst());
}

void TransformerConvImpl::reset() {
  auto& o = options;
  TESSERA_CHECK(o.in_channels() > 0 && o.out_channels() > 0 && o.heads() > 0,
                "TransformerConv: in_channels, out_channels and heads must be positive, got ", o.in_channels(), ", ",
                o.out_channels(), ", ", o.heads());
  o.beta(o.beta() && o.root_weight());  // as PyG: beta only with the root weight
  const int64_t HC = o.heads() * o.out_channels(), in_dst = in_channels_dst();
  auto lin = [&](int64_t in, int64_t out, bool b) { return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(b)); };
  lin_key = register_module("lin_key", lin(o.in_channels(), HC, true));
  lin_query = register_module("lin_query", lin(in_dst, HC, true));
  lin_value = register_module("lin_value", lin(o.in_channels(), HC, true));
  const int64_t width = o.concat() ? HC : o.out_channels();
  lin_skip = register_module("lin_skip", lin(in_dst, width, o.bias()));
  if (o.beta()) lin_beta = register_module("lin_beta", lin(3 * width, 1, false));
  TESSERA_CHECK(o.edge_dim() >= 0, "TransformerConv: edge_dim = ", o.edge_dim(), ", expected >= 0 (0: no edge features)");
  if (o.edge_dim() > 0) lin_edge = register_module("lin_edge", lin(o.edge_dim(), HC, false));
}

void TransformerConvImpl::reset_parameters() {
  for (auto* l : {&lin_key, &lin_query, &lin_value, &lin_skip, &lin_beta, &lin_edge})
    if (*l) (*l)->reset_parameters();
}

torch::Tensor TransformerConvImpl::forward(const torch::Tensor& x, const pt::Graph& g, const torch::Tensor& edge_attr) {
  pt::check_homogeneous("TransformerConv", x, options.in_channels(), in_channels_dst(), g, lin_key->weight);
  return propagate(x, x, g, edge_attr, false).out;
}

AttentionWeights TransformerConvImpl::forward_with_attention(const torch::Tensor& x, const pt::Graph& g,
                                                             const torch::Tensor& edge_attr) {
  pt::check_homogeneous("TransformerConv", x, options.in_channels(), in_channels_dst(), g, lin_key->weight);
  return propagate(x, x, g, edge_attr, true);
}

torch::Tensor TransformerConvImpl::forward(const torch::Tensor& x, const torch::Tensor& edge_index,
                                           const torch::Tensor& edge_attr) {
  pt::check_node_features("TransformerConv", x, options.in_channels(), lin_key->weight);
  return pt::forward_edge_index(*this, x, edge_index, edge_attr);
}

torch::Tensor TransformerConvImpl::forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& g,
                                           const torch::Tensor& edge_attr) {
  pt::check_bipartite("TransformerConv", x_src, options.in_channels(), x_dst, in_channels_dst(), g, lin_key->weight);
  return propagate(x_src, x_dst, g, edge_attr, false).out;
}

AttentionWeights TransformerConvImpl::forward_with_attention(const torch::Tensor& x_src, const torch::Tensor& x_dst,
                                                             const pt::Graph& g, const torch::Tensor& edge_attr) {
  pt::check_bipartite("TransformerConv", x_src, options.in_channels(), x_dst, in_channels_dst(), g, lin_key->weight);
  return propagate(x_src, x_dst, g, edge_attr, true);
}

namespace {

// TESSERA_TRANSFORMER_FOLD=1 / 0 (read once) forces the folded form on or off where it can run, as
// in the Python layer (for A/B measurements); -1: the rule.
int forced_fold() {
  static const int forced = [] {
    const char* e = std::getenv("TESSERA_TRANSFORMER_FOLD");
    return e && std::strcmp(e, "1") == 0 ? 1 : e && std::strcmp(e, "0") == 0 ? 0 : -1;
  }();
  return forced;
}

// Where the folded form runs unforced: the Python layer's FOLD_CPU_EQUAL_MIN_ENTRIES,
// FOLD_CUDA_MIN_ENTRIES and FOLD_CUDA_INFERENCE_MIN_ENTRIES (its comment has the measurements).
constexpr int64_t kFoldCpuEqualMinEntries = int64_t(1) << 18;
constexpr int64_t kFoldCudaMinEntries = int64_t(1) << 20;
constexpr int64_t kFoldCudaInferenceMinEntries = int64_t(1) << 16;

// Whether a call takes the folded form, the Python layer's rule (TransformerConv._folds): no edge
// features, no dropout in training (the value bias needs each row's sum of alpha, 1 only without
// dropout), no autocast (its queries would be cast and its keys, x_src itself, not); then where
// the head width C is at least the input width K: on the CPU where C > K, or C = K on graphs of at
// least kFoldCpuEqualMinEntries entries; on CUDA on graphs of at least kFoldCudaMinEntries, or
// kFoldCudaInferenceMinEntries with autograd off (no backward to pay for).
bool folds(const TransformerConvImpl& m, const torch::Tensor& x_src, const pt::Graph& g, bool edge_features) {
  if (edge_features || (m.is_training() && m.options.dropout() > 0) || pt::autocast_on(x_src)) return false;
  if (forced_fold() >= 0) return forced_fold() == 1;
  const int64_t k = x_src.size(1), c = m.options.out_channels();
  if (x_src.is_cpu()) return c > k || (c == k && g.nnz() >= kFoldCpuEqualMinEntries);
  return c >= k && g.nnz() >= (torch::GradMode::is_enabled() ? kFoldCudaMinEntries : kFoldCudaInferenceMinEntries);
}

// Whether lin_skip(x_dst) is added to the output as it is (the root weight, heads concatenated, no
// beta gate), so it can go in the write that makes the output: the folded form's last product, or
// the attention's residual where the skip is made with q, k and v. The Python layer's _plain_skip.
bool plain_skip(const TransformerConvImpl& m) {
  return m.options.root_weight() && !m.lin_beta && m.options.concat();
}

// The attention with lin_query, lin_key and lin_value folded into per-head operators on the inputs
// (the Python layer's TransformerConv._folded_attention has the derivation): the heads' queries
// M_h x_dst + c_h (M_h = W_k,h^T W_q,h, c_h = W_k,h^T b_q,h) side by side from one product, one
// multi-query attention over x_src as every head's key and value at scale 1/sqrt(C), then W_v,h and
// b_v,h on each head's column block of the aggregate; b_v only on rows with entries, b_k an exact
// zero gradient. Returns (out [N_dst, H*C], alpha [nnz, H] or undefined).
std::pair<torch::Tensor, torch::Tensor> folded_attention(const TransformerConvImpl& m, const pt::AttentionGraph& ag,
                                                         const pt::Graph& g, const torch::Tensor& x_dst,
                                                         const torch::Tensor& x_src, bool want_alpha) {
  const int64_t H = m.options.heads(), C = m.options.out_channels(), K = x_src.size(1);
  const auto w_k = m.lin_key->weight.view({H, C, K});
  const auto w_q = m.lin_query->weight.view({H, C, x_dst.size(1)});
  // The folded operators in fp32 at least, rounded once to the inputs' dtype.
  const auto wide = at::promote_types(x_dst.scalar_type(), torch::kFloat);
  const auto w_kt = w_k.transpose(1, 2).to(wide);
  const auto folded = torch::bmm(w_kt, w_q.to(wide)).to(x_dst.scalar_type()).view({H * K, -1});  // [H K, K_dst]
  torch::Tensor c;
  const torch::Tensor &b_q = m.lin_query->bias, &b_k = m.lin_key->bias;
  if (b_q.defined()) c = torch::bmm(w_kt, b_q.view({H, C, 1}).to(wide)).view({H * K}).to(x_dst.scalar_type());
  torch::Tensor b_v = m.lin_value->bias;
  if (b_v.defined() && b_k.defined() && b_k.requires_grad() && torch::GradMode::is_enabled())
    b_v = b_v + 0 * b_k;  // b_k's exact zero gradient, so that an optimizer sees it as PyG's
  pt::AttentionOptions o;
  o.kind = "transformer";
  o.heads = H;
  o.scale = 1.0 / std::sqrt(double(C));
  o.return_alpha = want_alpha;
  torch::Tensor query = pt::products(x_dst, {folded}, {c})[0];  // head h's query in columns h K ..
  auto [agg, lse, alpha] = pt::attention(ag, query, x_src, x_src, torch::Tensor(), o);  // multi-query
  query = torch::Tensor();
  // b_v in the product's epilogue when every row has an entry, else as a rank-1 update mask b_v^T;
  // lin_skip(x_dst) in the same product where the layer adds it as it is (plain_skip).
  const torch::Tensor mask = b_v.defined() ? g.nonempty_rows() : torch::Tensor();
  const bool skip = plain_skip(m);
  torch::Tensor out = pt::heads_product(agg, m.lin_value->weight, mask.defined() ? torch::Tensor() : b_v,
                                        skip ? x_dst : torch::Tensor(), skip ? m.lin_skip->weight : torch::Tensor(),
                                        skip ? m.lin_skip->bias : torch::Tensor());  // agg's column blocks
  agg = torch::Tensor();
  if (mask.defined()) out = out.addmm_(mask.to(out.scalar_type()), b_v.view({1, -1}));
  return {out, want_alpha ? alpha : torch::Tensor()};
}

}  // namespace

// The layer on checked node features (x_dst is x_src for a homogeneous call).
AttentionWeights TransformerConvImpl::propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst,
                                                const pt::Graph& g, const torch::Tensor& edge_attr, bool want_alpha) {
  const auto ea = pt::layer_edge_attr("TransformerConv", edge_attr, options.edge_dim(), g.nnz());
  const int64_t H = options.heads(), C = options.out_channels();
  // Projections as the Python layer makes them (projections.hpp): on the CPU the skip with q, k, v
  // (one op per input); elsewhere the skip waits for the end, so it is not alive during the attention.
  const bool early_skip = options.root_weight() && x_dst.is_cpu();
  const pt::AttentionGraph ag = pt::attention_graph(g);
  torch::Tensor out, alpha, x_r;
  bool skip_added = false;  // lin_skip(x_dst) added by the folded form's last product or the attention
  if (folds(*this, x_src, g, ea.defined())) {  // no q, k or v
    std::tie(out, alpha) = folded_attention(*this, ag, g, x_dst, x_src, want_alpha);
    skip_added = plain_skip(*this);
    if (early_skip && !skip_added) x_r = pt::linear(lin_skip, x_dst);
  } else {
    // The skip added as it is (heads concatenated, no beta gate) goes in the attention's own write,
    // its residual, wherever it is made with q, k and v: on the CPU, and on CUDA without autograd
    // (nothing is kept for a backward there; the Python layer's one op does the same).
    const bool added_as_is = plain_skip(*this);
    const bool with_qkv = early_skip || (added_as_is && !torch::GradMode::is_enabled());
    std::vector<std::pair<torch::nn::Linear, torch::Tensor>> pairs{
        {lin_query, x_dst}, {lin_key, x_src}, {lin_value, x_src}};
    if (with_qkv) pairs.emplace_back(lin_skip, x_dst);
    std::vector<torch::Tensor> ys = pt::project(pairs);
    if (with_qkv) x_r = ys[3];
    skip_added = with_qkv && added_as_is;
    pt::AttentionOptions o;
    o.kind = "transformer";
    o.heads = H;
    o.dropout = is_training() ? options.dropout() : 0.0;
    if (o.dropout > 0) o.seed = dropout_seed();
    o.return_alpha = want_alpha;  // before dropout, as PyG's TransformerConv returns it
    torch::Tensor lse;
    std::tie(out, lse, alpha) = pt::attention(ag, ys[0], ys[1], ys[2], torch::Tensor(), o, ea,
                                              lin_edge ? lin_edge->weight : torch::Tensor(), torch::Tensor(),
                                              skip_added ? x_r : torch::Tensor());
    if (!want_alpha) alpha = torch::Tensor();
  }
  if (!options.concat()) out = out.view({-1, H, C}).mean(1);
  if (!options.root_weight() || skip_added) return {out, g, alpha};
  if (!lin_beta)  // out + lin_skip(x_dst): on CUDA fp32 one kernel
    return {early_skip ? pt::add_to_fresh(out, x_r) : pt::linear_add(lin_skip, x_dst, out), g, alpha};
  if (!early_skip) x_r = pt::linear(lin_skip, x_dst);
  const auto b = torch::sigmoid(lin_beta->forward(torch::cat({out, x_r, out - x_r}, -1)));
  return {b * x_r + (1 - b) * out, g, alpha};
}

void TransformerConvImpl::pretty_print(std::ostream& stream) const {
  stream << "tessera::nn::TransformerConv(" << pt::in_channels_text(options.in_channels(), in_channels_dst()) << ", "
         << options.out_channels() << ", heads=" << options.heads() << ")";
}

// ---- the "transformer" model: layers x TransformerConv (heads concatenated, last averaged) ----
namespace {
ModelRegistrar transformer_registrar(
    "transformer", "Graph Transformer (Shi et al.): stacked TransformerConv (--heads, default 4), ELU, dropout",
    [](const ModelConfig& c) {
      return attention_model<TransformerConv>(
          "transformer", c, 4, [dropout = c.dropout](int64_t in, int64_t out, int64_t H, bool last) {
            return TransformerConv(TransformerConvOptions(in, out).heads(H).concat(!last).dropout(dropout));
          });
    });
}  // namespace

}  // namespace tessera::nn
