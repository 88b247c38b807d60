// tessera::nn::TransformerConv and the "transformer" model of `tessera train`.
#include "tessera/torch/transformer.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "attention_op.hpp"
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
  pt::check_homogeneous("TransformerConv", x, options.in_channels(), in_channels_dst(), g);
  return propagate(x, x, g, edge_attr, false).out;
}

AttentionWeights TransformerConvImpl::forward_with_attention(const torch::Tensor& x, const pt::Graph& g,
                                                             const torch::Tensor& edge_attr) {
  pt::check_homogeneous("TransformerConv", x, options.in_channels(), in_channels_dst(), g);
  return propagate(x, x, g, edge_attr, true);
}

torch::Tensor TransformerConvImpl::forward(const torch::Tensor& x, const torch::Tensor& edge_index,
                                           const torch::Tensor& edge_attr) {
  pt::check_node_features("TransformerConv", x, options.in_channels());
  return pt::forward_edge_index(*this, x, edge_index, edge_attr);
}

torch::Tensor TransformerConvImpl::forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& g,
                                           const torch::Tensor& edge_attr) {
  pt::check_bipartite("TransformerConv", x_src, options.in_channels(), x_dst, in_channels_dst(), g);
  return propagate(x_src, x_dst, g, edge_attr, false).out;
}

AttentionWeights TransformerConvImpl::forward_with_attention(const torch::Tensor& x_src, const torch::Tensor& x_dst,
                                                             const pt::Graph& g, const torch::Tensor& edge_attr) {
  pt::check_bipartite("TransformerConv", x_src, options.in_channels(), x_dst, in_channels_dst(), g);
  return propagate(x_src, x_dst, g, edge_attr, true);
}

// The layer on checked node features (x_dst is x_src for a homogeneous call).
AttentionWeights TransformerConvImpl::propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst,
                                                const pt::Graph& g, const torch::Tensor& edge_attr, bool want_alpha) {
  const auto ea = pt::layer_edge_attr("TransformerConv", edge_attr, options.edge_dim(), g.nnz());
  const int64_t H = options.heads(), C = options.out_channels();
  // Projections as the Python layer makes them (projections.hpp): on the CPU the skip with q, k, v
  // (one op per input); elsewhere the skip waits for the end, so it is not alive during the attention.
  const bool early_skip = options.root_weight() && x_dst.is_cpu();
  std::vector<std::pair<torch::nn::Linear, torch::Tensor>> pairs{
      {lin_query, x_dst}, {lin_key, x_src}, {lin_value, x_src}};
  if (early_skip) pairs.emplace_back(lin_skip, x_dst);
  const std::vector<torch::Tensor> ys = pt::project(pairs);
  const torch::Tensor &q = ys[0], &k = ys[1], &v = ys[2];
  const pt::AttentionGraph ag = pt::attention_graph(g);
  pt::AttentionOptions o;
  o.kind = "transformer";
  o.heads = H;
  o.dropout = is_training() ? options.dropout() : 0.0;
  if (o.dropout > 0) o.seed = dropout_seed();
  o.return_alpha = want_alpha;  // before dropout, as PyG's TransformerConv returns it
  auto [out, lse, alpha] = pt::attention(ag, q, k, v, torch::Tensor(), o, ea, lin_edge ? lin_edge->weight : torch::Tensor());
  if (!want_alpha) alpha = torch::Tensor();
  if (!options.concat()) out = out.view({-1, H, C}).mean(1);
  if (!options.root_weight()) return {out, g, alpha};
  if (!lin_beta)  // out + lin_skip(x_dst): on CUDA fp32 one kernel
    return {early_skip ? pt::add_to_fresh(out, ys[3]) : pt::linear_add(lin_skip, x_dst, out), g, alpha};
  const torch::Tensor x_r = early_skip ? ys[3] : pt::linear(lin_skip, x_dst);
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
