#pragma once
// tessera::nn::SAGEConv: PyG's SAGEConv (2.x) in C++ on tessera's degree-aware segment reduce.
// Same options and defaults (aggr = "mean", normalize = false, root_weight = true, project = false,
// bias = true), same parameter names and state_dict layout ("lin_l.weight" [out, in], "lin_l.bias"
// [out] (when bias), "lin_r.weight" [out, in] (when root_weight, never a bias), and with project
// "lin.weight"/"lin.bias" [in, in]), same forward order:
//   x_src = project ? relu(lin(x)) : x;  out = lin_l(AGGR_{j -> i} x_src[j]);
//   out += lin_r(x[i]) when root_weight;  out = l2-normalize(out) when normalize.
// The aggregation runs on the raw (or projected) inputs before lin_l, adds no self-loops, gives 0
// for nodes without in-neighbours, and counts duplicate edges once per occurrence (as PyG's scatter).
// aggr in max, min, sum (or "add"), mean.
// Bipartite, as PyG's in_channels = (source width, target width) and x = (x_src, x_dst): the option
// in_channels_dst sets lin_r's input width (default: in_channels), forward(x_src, x_dst, graph)
// aggregates x_src over a graph of x_dst.size(0) rows and x_src.size(0) columns (a sampled block),
// and an undefined x_dst, as PyG's (x_src, None), leaves out the root term.
#include <torch/torch.h>

#include <string>

#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct SAGEConvOptions {
  SAGEConvOptions(int64_t in_channels, int64_t out_channels) : in_channels_(in_channels), out_channels_(out_channels) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, out_channels);
  TORCH_ARG(int64_t, in_channels_dst) = -1;  // the targets' width (lin_r's input); -1: in_channels
  TORCH_ARG(std::string, aggr) = "mean";
  TORCH_ARG(bool, normalize) = false;
  TORCH_ARG(bool, root_weight) = true;
  TORCH_ARG(bool, project) = false;
  TORCH_ARG(bool, bias) = true;
};

class SAGEConvImpl : public torch::nn::Cloneable<SAGEConvImpl> {
 public:
  SAGEConvImpl(int64_t in_channels, int64_t out_channels) : SAGEConvImpl(SAGEConvOptions(in_channels, out_channels)) {}
  explicit SAGEConvImpl(const SAGEConvOptions& options);

  void reset() override;
  void reset_parameters();           // torch.nn.Linear's init for every Linear, as PyG's Linear

  torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index);
  // Bipartite: graph rows = targets (x_dst), columns = sources (x_src); x_dst may be undefined.
  torch::Tensor forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph);
  // edge_index [2, E] (sources; targets) between x_src's and x_dst's nodes; num_dst: the number of
  // targets when x_dst is undefined (PyG's size[1]).
  torch::Tensor forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const torch::Tensor& edge_index,
                        int64_t num_dst = -1);
  int64_t in_channels_dst() const;   // lin_r's input width

  void pretty_print(std::ostream& stream) const override;

  SAGEConvOptions options;
  torch::nn::Linear lin{nullptr};    // project only
  torch::nn::Linear lin_l{nullptr};
  torch::nn::Linear lin_r{nullptr};  // root_weight only

 private:
  torch::Tensor propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph);
};
TORCH_MODULE(SAGEConv);

// The aggregation alone (autograd-aware): out[i] = AGGR over in-neighbours j of x[j].
torch::Tensor sage_aggregate(const pt::Graph& graph, const torch::Tensor& x, const std::string& aggr);

}  // namespace tessera::nn
