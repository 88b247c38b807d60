// tessera::nn::GCNConv and the "gcn" model of `tessera train`.
#include "tessera/torch/gcn.hpp"

#include <cmath>

#include "layer_inputs.hpp"
#include "projections.hpp"
#include "tessera/core/error.hpp"
#include "tessera/torch/models.hpp"

namespace tessera::nn {

GCNConvImpl::GCNConvImpl(const GCNConvOptions& opts) : options(opts) { reset(); }

void GCNConvImpl::reset() {
  TESSERA_CHECK(options.in_channels() > 0 && options.out_channels() > 0,
                "GCNConv: in_channels and out_channels must be positive (lazy in_channels=-1 is not supported), got ",
                options.in_channels(), " and ", options.out_channels());
  lin = register_module("lin", torch::nn::Linear(
                                   torch::nn::LinearOptions(options.in_channels(), options.out_channels()).bias(false)));
  if (options.bias())
    bias = register_parameter("bias", torch::empty({options.out_channels()}));
  else
    bias = register_parameter("bias", torch::Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

void GCNConvImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  // PyG's glorot: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
  const double a = std::sqrt(6.0 / double(options.in_channels() + options.out_channels()));
  lin->weight.uniform_(-a, a);
  if (bias.defined()) bias.zero_();
  cached_ = pt::Graph();
}

torch::Tensor GCNConvImpl::propagate(const torch::Tensor& x, const pt::Graph& g) {
  auto h = pt::linear(lin, x);  // the Python layer's projection (projections.hpp)
  // + bias fused into the SpMM's one write of the output (a separate add re-reads and rewrites it)
  return pt::spmm(g, h, {}, bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt);
}

torch::Tensor GCNConvImpl::forward(const torch::Tensor& x, const pt::Graph& graph,
                                   const c10::optional<torch::Tensor>& edge_weight) {
  pt::check_node_features("GCNConv", x, options.in_channels(), graph, lin->weight);
  pt::Graph g = graph;
  if (edge_weight && edge_weight->defined())
    g = pt::Graph::from_csr(graph.rowptr(), graph.col(), edge_weight, graph.cols());
  if (!options.normalize()) return propagate(x, g);
  const auto loops = options.add_self_loops() ? "remaining" : "none";
  const double fill = options.improved() ? 2.0 : 1.0;
  return propagate(x, g.gcn_normalized(loops, fill, pt_dtype(x), options.cached()));
}

torch::Tensor GCNConvImpl::forward(const torch::Tensor& x, const torch::Tensor& edge_index,
                                   const c10::optional<torch::Tensor>& edge_weight) {
  pt::check_node_features("GCNConv", x, options.in_channels(), lin->weight);
  if (options.normalize() && options.cached() && cached_.defined()) return propagate(x, cached_);
  const auto g = pt::Graph::from_edge_index(edge_index, edge_weight, x.size(0));
  if (!options.normalize()) return propagate(x, g);
  // PyG >= 2.3: add_remaining_self_loops runs before the weights default to ones, so without
  // edge weights every loop weighs 1 even when improved.
  const bool weighted = edge_weight && edge_weight->defined();
  const double fill = (options.improved() && weighted) ? 2.0 : 1.0;
  auto normalized = g.gcn_normalized(options.add_self_loops() ? "remaining" : "none", fill, pt_dtype(x), false);
  if (options.cached()) cached_ = normalized;
  return propagate(x, normalized);
}

torch::ScalarType GCNConvImpl::pt_dtype(const torch::Tensor& x) {
  // Normalized weights in x's accumulation type (float64 for float64 features, else float32).
  return x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
}

void GCNConvImpl::pretty_print(std::ostream& stream) const {
  stream << "tessera::nn::GCNConv(" << options.in_channels() << ", " << options.out_channels() << ")";
}

// ---- the "gcn" model: layers x GCNConv, ReLU + dropout between them ----
namespace {
ModelRegistrar gcn_registrar("gcn", "GCN (Kipf & Welling): stacked GCNConv, ReLU, dropout",
                             [](const ModelConfig& c) {
                               return std::make_shared<StackedModel<GCNConv>>("gcn", c, [](int64_t in, int64_t out, bool) {
                                 return GCNConv(GCNConvOptions(in, out).cached(true));
                               });
                             });
}  // namespace

}  // namespace tessera::nn
