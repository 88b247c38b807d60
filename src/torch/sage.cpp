// tessera::nn::SAGEConv and the "sage" model of `tessera train` (--aggr max|min|sum|mean).
#include "tessera/torch/sage.hpp"

#include "layer_inputs.hpp"
#include "projections.hpp"
#include "segment_reduce_op.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ops/segment_reduce.hpp"
#include "tessera/torch/models.hpp"

namespace tessera::nn {

torch::Tensor sage_aggregate(const pt::Graph& graph, const torch::Tensor& x, const std::string& aggr) {
  TESSERA_CHECK(graph.cols() == x.size(0), "SAGEConv: graph has ", graph.cols(), " source nodes but x has ",
                x.size(0), " rows");
  const std::string reduce = aggr == "add" ? "sum" : aggr;
  return std::get<0>(pt::segment_reduce(graph.rowptr(), graph.col(), x, reduce, int64_t(graph.id())));
}

SAGEConvImpl::SAGEConvImpl(const SAGEConvOptions& opts) : options(opts) { reset(); }

int64_t SAGEConvImpl::in_channels_dst() const {
  return pt::targets_width("SAGEConv", options.in_channels(), options.in_channels_dst());
}

void SAGEConvImpl::reset() {
  TESSERA_CHECK(options.in_channels() > 0 && options.out_channels() > 0,
                "SAGEConv: in_channels and out_channels must be positive (lazy -1 is not supported), got ",
                options.in_channels(), " and ", options.out_channels());
  in_channels_dst();  // validates it (lin_r, which reads it, is optional)
  ops::parse_reduce(options.aggr() == "add" ? "sum" : options.aggr());  // throws on unknown aggregations
  const int64_t in = options.in_channels(), out = options.out_channels();
  if (options.project())
    lin = register_module("lin", torch::nn::Linear(torch::nn::LinearOptions(in, in).bias(true)));
  lin_l = register_module("lin_l", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(options.bias())));
  if (options.root_weight())
    lin_r = register_module("lin_r", torch::nn::Linear(torch::nn::LinearOptions(in_channels_dst(), out).bias(false)));
  reset_parameters();
}

void SAGEConvImpl::reset_parameters() {
  // PyG's Linear defaults to kaiming_uniform(a = sqrt(5)) and U(+-1/sqrt(fan_in)) for the bias,
  // which is exactly torch.nn.Linear's own initialization.
  if (lin) lin->reset_parameters();
  lin_l->reset_parameters();
  if (lin_r) lin_r->reset_parameters();
}

torch::Tensor SAGEConvImpl::forward(const torch::Tensor& x, const pt::Graph& graph) {
  pt::check_homogeneous("SAGEConv", x, options.in_channels(), in_channels_dst(), graph, lin_l->weight);
  return propagate(x, x, graph);
}

torch::Tensor SAGEConvImpl::forward(const torch::Tensor& x, const torch::Tensor& edge_index) {
  pt::check_node_features("SAGEConv", x, options.in_channels(), lin_l->weight);
  return forward(x, pt::Graph::from_edge_index(edge_index, {}, x.size(0)));
}

torch::Tensor SAGEConvImpl::forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph) {
  pt::check_source_features("SAGEConv", x_src, options.in_channels(), graph, lin_l->weight);
  if (x_dst.defined()) pt::check_target_features("SAGEConv", x_dst, in_channels_dst(), graph, lin_l->weight);
  return propagate(x_src, x_dst, graph);
}

torch::Tensor SAGEConvImpl::forward(const torch::Tensor& x_src, const torch::Tensor& x_dst,
                                    const torch::Tensor& edge_index, int64_t num_dst) {
  pt::check_node_features("SAGEConv", x_src, options.in_channels(), lin_l->weight);
  TESSERA_CHECK(x_dst.defined() || num_dst >= 0, "SAGEConv: without x_dst, give num_dst (the number of targets)");
  TESSERA_CHECK(!x_dst.defined() || num_dst < 0 || num_dst == x_dst.size(0), "SAGEConv: num_dst = ", num_dst,
                " but x_dst has ", x_dst.size(0), " rows");
  const int64_t targets = x_dst.defined() ? x_dst.size(0) : num_dst;
  return forward(x_src, x_dst, pt::Graph::from_edge_index(edge_index, {}, targets, x_src.size(0)));
}

// The layer on checked inputs.
torch::Tensor SAGEConvImpl::propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph) {
  // Projections as the Python layer's (projections.hpp: tessera's kernel on CUDA fp32).
  const torch::Tensor src = options.project() ? torch::relu(pt::linear(lin, x_src)) : x_src;
  auto out = pt::linear(lin_l, sage_aggregate(graph, src, options.aggr()));
  // + lin_r(x_dst) with no second [N, out] buffer where the types allow (projections.hpp).
  if (options.root_weight() && x_dst.defined()) out = pt::linear_add(lin_r, x_dst, out);
  if (options.normalize()) out = torch::nn::functional::normalize(out, torch::nn::functional::NormalizeFuncOptions().p(2.0).dim(-1));
  return out;
}

void SAGEConvImpl::pretty_print(std::ostream& stream) const {
  stream << "tessera::nn::SAGEConv(" << pt::in_channels_text(options.in_channels(), in_channels_dst()) << ", "
         << options.out_channels() << ", aggr=" << options.aggr() << ")";
}

// ---- the "sage" model: layers x SAGEConv, ReLU + dropout between them; --aggr picks the reduction ----
namespace {
ModelRegistrar sage_registrar("sage", "GraphSAGE (Hamilton et al.): stacked SAGEConv, ReLU, dropout; --aggr max|min|sum|mean",
                              [](const ModelConfig& c) {
                                const auto it = c.extra.find("aggr");
                                const std::string aggr = it == c.extra.end() ? "mean" : it->second;
                                return std::make_shared<StackedModel<SAGEConv>>("sage", c, [aggr](int64_t in, int64_t out, bool) {
                                  return SAGEConv(SAGEConvOptions(in, out).aggr(aggr));
                                });
                              });
}  // namespace

}  // namespace tessera::nn
