#pragma once
// tessera::nn::GATv2Conv: PyG's GATv2Conv (2.x) in C++ on tessera's fused attention. Same options
// and defaults, same parameter names and state_dict layout ("lin_l.weight/bias", "lin_r.*" (the
// same module when share_weights), "att" [1, H, C], "res.weight", "bias"), same forward order:
// x_l = lin_l(x), x_r = lin_r(x); fused attention (self-loops: existing removed, one per node
// added); concat or mean over heads; + res(x); + bias. Edge features (edge_dim > 0, PyG's
// edge_dim; 0 = None): "lin_edge.weight" [H*C, edge_dim] (glorot, no bias) projects them inside the
// fused kernels; the added self-loops get fill_value ("mean" | "add" | "max" | "min" | "mul") of
// their target's remaining in-edge features.
// Bipartite, as PyG's in_channels = (source width, target width) and x = (x_src, x_dst): the option
// in_channels_dst sets lin_r's and res's input width (default: in_channels; share_weights needs
// them equal), and forward(x_src, x_dst, graph) projects x_l = lin_l(x_src), x_r = lin_r(x_dst)
// over a graph of x_dst.size(0) rows and x_src.size(0) columns; the self-loops join node i to
// itself for i < min(sources, targets), and res reads x_dst.
#include <torch/torch.h>

#include <string>

#include "tessera/torch/attention_weights.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct GATv2ConvOptions {
  GATv2ConvOptions(int64_t in_channels, int64_t out_channels) : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(int64_t, in_channels_dst) = -1;  // the targets' width (lin_r's, res's input); -1: in_channels
  TORCH_ARG(int64_t, heads) = 1;
  TORCH_ARG(bool, concat) = true;
  TORCH_ARG(double, negative_slope) = 0.2;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, add_self_loops) = true;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, share_weights) = false;
  TORCH_ARG(bool, residual) = false;
  TORCH_ARG(int64_t, edge_dim) = 0;
  TORCH_ARG(std::string, fill_value) = "mean";
};

class GATv2ConvImpl : public torch::nn::Cloneable<GATv2ConvImpl> {
 public:
  GATv2ConvImpl(int64_t in_channels, int64_t out_channels)
      : GATv2ConvImpl(GATv2ConvOptions(in_channels, out_channels)) {}
  explicit GATv2ConvImpl(const GATv2ConvOptions& options);

  void reset() override;
  void reset_parameters();  // glorot lin_l/lin_r/res weights and att, U(+-1/sqrt(in)) biases, zero bias

  // graph: rows = targets. edge_attr: [nnz, edge_dim] (or [nnz] for edge_dim 1) in graph's entry
  // order, exactly when edge_dim > 0. Returns [N, H*C] (concat) or [N, C].
  torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph, const torch::Tensor& edge_attr = {});
  // edge_index [2, E] (sources; targets) and edge_attr in its order, as PyG's call; the graph is built
  // per call (build a pt::Graph once, with pt::graph_and_edge_attr, to reuse it).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index, const torch::Tensor& edge_attr = {});
  // Bipartite: graph rows = targets (x_dst), columns = sources (x_src). Returns [targets, ...].
  torch::Tensor forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                        const torch::Tensor& edge_attr = {});
  // forward and the attention weights, as PyG's return_attention_weights = True (alpha after dropout, as
  // PyG's GATv2Conv returns it).
  AttentionWeights forward_with_attention(const torch::Tensor& x, const pt::Graph& graph,
                                          const torch::Tensor& edge_attr = {});
  AttentionWeights forward_with_attention(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                                          const torch::Tensor& edge_attr = {});
  int64_t in_channels_dst() const;  // lin_r's input width

  void pretty_print(std::ostream& stream) const override;

  GATv2ConvOptions options;
  torch::nn::Linear lin_l{nullptr}, lin_r{nullptr}, res{nullptr}, lin_edge{nullptr};
  torch::Tensor att, bias;

 private:
  AttentionWeights propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                             const torch::Tensor& edge_attr, bool want_alpha);
  // remove loops, add one per node (memoized per graph); with edge features also the 0/1
  // selection matrix (looped entry -> its row of [edge_attr; loop fill]) and each of g's entries'
  // target for the loop fill (n for a removed loop or a target past the loops: excluded)
  pt::Graph looped(const pt::Graph& g);
  torch::Tensor looped_edge_attr(const pt::Graph& g, const torch::Tensor& edge_attr);
  uint64_t looped_for_ = 0;
  pt::Graph looped_, looped_select_;
  torch::Tensor looped_fill_targets_;
};
TORCH_MODULE(GATv2Conv);

// Features of the n appended self-loops from the kept edges' features [E, D] and their targets
// (PyG's add_self_loops fill_value as a torch scatter_reduce name: sum, mean, amax, amin, prod;
// nodes without in-edges get zeros, ones for prod). An edge whose target is n takes no part.
torch::Tensor self_loop_fill(const torch::Tensor& edge_attr, const torch::Tensor& targets, int64_t n,
                             const std::string& reduce);

}  // namespace tessera::nn
