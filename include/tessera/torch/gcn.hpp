#pragma once
// tessera::nn::GCNConv: PyG's GCNConv (2.x) in C++ on tessera's SpMM. Same constructor options
// and defaults, same parameter names and state_dict layout ("lin.weight" [out, in], "bias" [out]),
// same forward order: x = lin(x); propagate with the gcn_norm weights; + bias.
//
// Inputs: an edge_index [2, E] (PyG semantics: self-loops via add_remaining_self_loops, and, as in
// PyG >= 2.3, `improved` only changes the fill of nodes without a loop when edge weights are
// given), or a tessera::pt::Graph (rows = targets; `improved` always fills 2). cached = true keeps
// the normalized graph of the first call (PyG's transductive cache) for edge_index inputs; for
// Graph inputs the normalized graph is memoized on the graph itself, so the cache is keyed by
// graph identity and a different graph is never served a stale normalization.
#include <torch/torch.h>

#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct GCNConvOptions {
  GCNConvOptions(int64_t in_channels, int64_t out_channels) : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(bool, improved) = false;
  TORCH_ARG(bool, cached) = false;
  TORCH_ARG(bool, add_self_loops) = true;   // PyG: None -> normalize
  TORCH_ARG(bool, normalize) = true;
  TORCH_ARG(bool, bias) = true;
};

class GCNConvImpl : public torch::nn::Cloneable<GCNConvImpl> {
 public:
  GCNConvImpl(int64_t in_channels, int64_t out_channels) : GCNConvImpl(GCNConvOptions(in_channels, out_channels)) {}
  explicit GCNConvImpl(const GCNConvOptions& options);

  void reset() override;             // (re)creates the parameters and clears the cache
  void reset_parameters();           // glorot(lin.weight), zeros(bias), clears the cache

  torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph,
                        const c10::optional<torch::Tensor>& edge_weight = {});
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index,
                        const c10::optional<torch::Tensor>& edge_weight = {});

  void pretty_print(std::ostream& stream) const override;

  GCNConvOptions options;
  torch::nn::Linear lin{nullptr};
  torch::Tensor bias;

 private:
  torch::Tensor propagate(const torch::Tensor& x, const pt::Graph& normalized);
  static torch::ScalarType pt_dtype(const torch::Tensor& x);
  pt::Graph cached_;                 // edge_index inputs with cached = true
};
TORCH_MODULE(GCNConv);

}  // namespace tessera::nn
