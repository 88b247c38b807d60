#pragma once
// tessera::nn::GATv2Conv: PyG's GATv2Conv (2.x) in C++ on tessera's fused attention. Same options
// and defaults, same parameter names and state_dict layout ("lin_l.weight/bias", "lin_r.*" (the
// same module when share_weights), "att" [1, H, C], "res.weight", "bias"), same forward order:
// x_l = lin_l(x), x_r = lin_r(x); fused attention (self-loops: existing removed, one per node
// added); concat or mean over heads; + res(x); + bias. Edge features are not supported yet.
#include <torch/torch.h>

#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct GATv2ConvOptions {
  GATv2ConvOptions(int64_t in_channels, int64_t out_channels) : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(int64_t, heads) = 1;
  TORCH_ARG(bool, concat) = true;
  TORCH_ARG(double, negative_slope) = 0.2;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(bool, add_self_loops) = true;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(bool, share_weights) = false;
  TORCH_ARG(bool, residual) = false;
};

class GATv2ConvImpl : public torch::nn::Cloneable<GATv2ConvImpl> {
 public:
  GATv2ConvImpl(int64_t in_channels, int64_t out_channels)
      : GATv2ConvImpl(GATv2ConvOptions(in_channels, out_channels)) {}
  explicit GATv2ConvImpl(const GATv2ConvOptions& options);

  void reset() override;
  void reset_parameters();  // glorot lin_l/lin_r/res weights and att, U(+-1/sqrt(in)) biases, zero bias

  // graph: rows = targets. Returns [N, H*C] (concat) or [N, C].
  torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph);

  void pretty_print(std::ostream& stream) const override;

  GATv2ConvOptions options;
  torch::nn::Linear lin_l{nullptr}, lin_r{nullptr}, res{nullptr};
  torch::Tensor att, bias;

 private:
  pt::Graph looped(const pt::Graph& g);  // remove loops, add one per node (memoized per graph)
  uint64_t looped_for_ = 0;
  pt::Graph looped_;
};
TORCH_MODULE(GATv2Conv);

}  // namespace tessera::nn
