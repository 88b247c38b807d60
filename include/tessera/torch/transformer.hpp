#pragma once
// tessera::nn::TransformerConv: PyG's TransformerConv (2.x) in C++ on tessera's fused attention.
// Same options and defaults, parameter names and state_dict layout ("lin_key", "lin_query",
// "lin_value", "lin_skip", "lin_beta"), same forward: q = lin_query(x), k = lin_key(x),
// v = lin_value(x); softmax(<q_i, k_j>/sqrt(C)) over in-edges (no self-loops added); concat or
// mean; root_weight adds lin_skip(x), gated by beta when beta = true. Edge features (edge_dim > 0,
// PyG's edge_dim; 0 = None): e = lin_edge(edge_attr) ("lin_edge.weight", no bias) is added to k_j
// and v_j, inside the fused kernels.
#include <torch/torch.h>

#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct TransformerConvOptions {
  TransformerConvOptions(int64_t in_channels, int64_t out_channels)
      : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
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

  void pretty_print(std::ostream& stream) const override;

  TransformerConvOptions options;
  torch::nn::Linear lin_key{nullptr}, lin_query{nullptr}, lin_value{nullptr}, lin_skip{nullptr}, lin_beta{nullptr},
      lin_edge{nullptr};
};
TORCH_MODULE(TransformerConv);

}  // namespace tessera::nn
