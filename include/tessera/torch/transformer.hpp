#pragma once
// tessera::nn::TransformerConv: PyG's TransformerConv (2.x) in C++ on tessera's fused attention.
// Same options and defaults, parameter names and state_dict layout ("lin_key", "lin_query",
// "lin_value", "lin_skip", "lin_beta"), same forward: q = lin_query(x), k = lin_key(x),
// v = lin_value(x); softmax(<q_i, k_j>/sqrt(C)) over in-edges (no self-loops added); concat or
// mean; root_weight adds lin_skip(x), gated by beta when beta = true. Edge features (edge_dim > 0,
// PyG's edge_dim; 0 = None): e = lin_edge(edge_attr) ("lin_edge.weight", no bias) is added to k_j
// and v_j, inside the fused kernels.
// Folded form (as the Python layer's, src/torch/transformer.cpp): without edge features, and not
// with dropout in training, the layer can make no q, k or v. Every head attends over x_src itself
// (one multi-query call) with the query (W_k,h^T W_q,h) x_dst + W_k,h^T b_q,h and applies W_v,h
// after the aggregation: no more work wherever the head width C is at least the input width K. The
// CPU takes it where C > K, or C = K on graphs of 2^18 entries and more; CUDA where C >= K on graphs
// of 2^20 entries and more (TESSERA_TRANSFORMER_FOLD=1 / 0 forces it on or off).
// Bipartite, as PyG's in_channels = (source width, target width) and x = (x_src, x_dst): the option
// in_channels_dst sets lin_query's and lin_skip's input width (default: in_channels), and
// forward(x_src, x_dst, graph) takes q = lin_query(x_dst), k = lin_key(x_src), v = lin_value(x_src)
// and lin_skip(x_dst) over a graph of x_dst.size(0) rows and x_src.size(0) columns.
#include <torch/torch.h>

#include "tessera/torch/attention_weights.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct TransformerConvOptions {
  TransformerConvOptions(int64_t in_channels, int64_t out_channels)
      : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(int64_t, in_channels_dst) = -1;  // the targets' width (lin_query's, lin_skip's input); -1: in_channels
  TORCH_ARG(int64_t, heads) = 1;
  TORCH_ARG(bool, concat) = true;
  TORCH_ARG(bool, beta) = false;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, root_weight) = true;
  TORCH_ARG(int64_t, edge_dim) = 0;
};

class TransformerConvImpl : public torch::nn::Cloneable<TransformerConvImpl> {
 public:
  TransformerConvImpl(int64_t in_channels, int64_t out_channels)
      : TransformerConvImpl(TransformerConvOptions(in_channels, out_channels)) {}
  explicit TransformerConvImpl(const TransformerConvOptions& options);

  void reset() override;
  void reset_parameters();  // torch.nn.Linear's (= PyG Linear's default) initializers

  // edge_attr: [nnz, edge_dim] in graph's entry order, exactly when edge_dim > 0.
  torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph, const torch::Tensor& edge_attr = {});
  // edge_index [2, E] (sources; targets) and edge_attr in its order, as PyG's call; the graph is built
  // per call (build a pt::Graph once, with pt::graph_and_edge_attr, to reuse it).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index, const torch::Tensor& edge_attr = {});
  // Bipartite: graph rows = targets (x_dst), columns = sources (x_src). Returns [targets, ...].
  torch::Tensor forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                        const torch::Tensor& edge_attr = {});
  // forward and the attention weights, as PyG's return_attention_weights = True (alpha before dropout, as
  // PyG's TransformerConv returns it).
  AttentionWeights forward_with_attention(const torch::Tensor& x, const pt::Graph& graph,
                                          const torch::Tensor& edge_attr = {});
  AttentionWeights forward_with_attention(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                                          const torch::Tensor& edge_attr = {});
  int64_t in_channels_dst() const;  // lin_query's input width

  void pretty_print(std::ostream& stream) const override;

  TransformerConvOptions options;
  torch::nn::Linear lin_key{nullptr}, lin_query{nullptr}, lin_value{nullptr}, lin_skip{nullptr}, lin_beta{nullptr},
      lin_edge{nullptr};

 private:
  AttentionWeights propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                             const torch::Tensor& edge_attr, bool want_alpha);
};
TORCH_MODULE(TransformerConv);

}  // namespace tessera::nn
