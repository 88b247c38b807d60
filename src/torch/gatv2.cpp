// tessera::nn::GATv2Conv and the "gatv2" model of `tessera train`.
#include "tessera/torch/gatv2.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "attention_op.hpp"
#include "graph_ops.hpp"
#include "layer_inputs.hpp"
#include "projections.hpp"
#include "tessera/core/error.hpp"
#include "tessera/torch/models.hpp"

namespace tessera::nn {

namespace {
void glorot(torch::Tensor& t) {
  const double a = std::sqrt(6.0 / double(t.size(-2) + t.size(-1)));
  t.uniform_(-a, a);
}
void pyg_bias(torch::nn::Linear& lin) {  // PyG Linear: U(-1/sqrt(in), 1/sqrt(in))
  if (!lin->bias.defined()) return;
  const double b = 1.0 / std::sqrt(double(lin->weight.size(1)));
  lin->bias.uniform_(-b, b);
}
// PyG's fill_value for the added self-loops as torch's scatter_reduce name; fails on any other.
std::string fill_reduction(const std::string& f) {
  if (f == "mean" || f == "sum") return f;
  if (f == "add") return "sum";
  if (f == "max") return "amax";
  if (f == "min") return "amin";
  if (f == "mul") return "prod";
  fail("GATv2Conv: unsupported fill_value '", f, "' (expected mean, add, sum, max, min or mul)");
}
}  // namespace

GATv2ConvImpl::GATv2ConvImpl(const GATv2ConvOptions& opts) : options(opts) { reset(); }

int64_t GATv2ConvImpl::in_channels_dst() const {
  return pt::targets_width("GATv2Conv", options.in_channels(), options.in_channels_dst());
}

void GATv2ConvImpl::reset() {
  const auto& o = options;
  TESSERA_CHECK(o.in_channels() > 0 && o.out_channels() > 0 && o.heads() > 0,
                "GATv2Conv: in_channels, out_channels and heads must be positive, got ", o.in_channels(), ", ",
                o.out_channels(), ", ", o.heads());
  TESSERA_CHECK(o.edge_dim() >= 0, "GATv2Conv: edge_dim = ", o.edge_dim(), ", expected >= 0 (0: no edge features)");
  const int64_t in_dst = in_channels_dst();
  // PyG's lin_r is lin_l then, and fails on the targets' width in forward: refused here instead.
  TESSERA_CHECK(!o.share_weights() || in_dst == o.in_channels(), "GATv2Conv: share_weights needs equal source and ",
                "target widths, got in_channels = ", o.in_channels(), ", in_channels_dst = ", in_dst);
  fill_reduction(o.fill_value());  // validates it
  const int64_t HC = o.heads() * o.out_channels();
  lin_l = register_module("lin_l", torch::nn::Linear(torch::nn::LinearOptions(o.in_channels(), HC).bias(o.bias())));
  lin_r = o.share_weights()
              ? register_module("lin_r", lin_l)
              : register_module("lin_r", torch::nn::Linear(torch::nn::LinearOptions(in_dst, HC).bias(o.bias())));
  att = register_parameter("att", torch::empty({1, o.heads(), o.out_channels()}));
  if (o.edge_dim() > 0)
    lin_edge = register_module("lin_edge", torch::nn::Linear(torch::nn::LinearOptions(o.edge_dim(), HC).bias(false)));
  const int64_t total = o.concat() ? HC : o.out_channels();
  if (o.residual())
    res = register_module("res", torch::nn::Linear(torch::nn::LinearOptions(in_dst, total).bias(false)));
  bias = o.bias() ? register_parameter("bias", torch::empty({total}))
                  : register_parameter("bias", torch::Tensor(), /*requires_grad=*/false);
  reset_parameters();
}

void GATv2ConvImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  glorot(lin_l->weight);
  pyg_bias(lin_l);
  if (!options.share_weights()) {
    glorot(lin_r->weight);
    pyg_bias(lin_r);
  }
  if (res) glorot(res->weight);
  if (lin_edge) glorot(lin_edge->weight);
  glorot(att);
  if (bias.defined()) bias.zero_();
  looped_for_ = 0;
  looped_ = pt::Graph();
}

pt::Graph GATv2ConvImpl::looped(const pt::Graph& g) {
  if (looped_for_ == g.id() && looped_.defined()) return looped_;
  const auto dev = g.device();
  const auto deg = (g.rowptr().slice(0, 1) - g.rowptr().slice(0, 0, -1)).to(torch::kLong);
  const auto rows = torch::repeat_interleave(torch::arange(g.rows(), torch::dtype(torch::kLong).device(dev)), deg);
  const auto cols = g.col().to(torch::kLong);
  const auto keep = cols != rows;
  const auto kept = keep.nonzero().squeeze(1);  // g's entries that stay (one device sync)
  const int64_t n = std::min(g.rows(), g.cols());
  const auto loops = torch::arange(n, torch::dtype(torch::kLong).device(dev));
  const auto ei =
      torch::cat({torch::stack({cols.index_select(0, kept), rows.index_select(0, kept)}), torch::stack({loops, loops})}, 1);
  auto [rowptr, col, perm] = pt::edge_index_to_csr(ei, g.rows(), g.cols(), true);
  looped_ = pt::Graph::from_csr(rowptr, col, {}, g.cols());
  if (options.edge_dim() > 0) {  // the maps from g's entries serve only the edge features
    // Each looped entry's row of [edge_attr; fill]: kept entries by position, the loops after g's
    // nnz entries, in looped CSR order; one selection SpMM gathers them (looped_edge_attr).
    const int64_t nnz = cols.numel();
    const auto source = torch::cat({kept, torch::arange(nnz, nnz + n, loops.options())})
                            .index_select(0, perm.to(torch::kLong));
    looped_select_ = pt::Graph::from_csr(torch::arange(source.numel() + 1, col.options()), source.to(col.scalar_type()),
                                         {}, nnz + n);
    // Removed loops go to the spill row n, and so do targets past the loops (a bipartite graph with
    // more targets than sources), which have no loop to fill.
    looped_fill_targets_ = rows.masked_fill(~keep, n).clamp_max(n);
  }
  looped_for_ = g.id();
  return looped_;
}

// The looped graph's edge features in its entry order: g's kept entries, then each node's loop
// filled as PyG's add_self_loops (fill_value over the node's remaining in-edge features). One
// gather, as an SpMM with the 0/1 selection matrix, and no boolean-mask copy (which waits on the
// device for its size): torch 2.x's CUDA index_select spends a thread block per gathered row
// (10.2 ms for R-MAT 2^20's 17M entries on the H200; python/tessera/nn/gatv2.py's select).
torch::Tensor GATv2ConvImpl::looped_edge_attr(const pt::Graph& g, const torch::Tensor& edge_attr) {
  looped(g);
  const int64_t n = std::min(g.rows(), g.cols());
  const auto fill = self_loop_fill(edge_attr, looped_fill_targets_, n, fill_reduction(options.fill_value()));
  return pt::spmm(looped_select_, torch::cat({edge_attr, fill}, 0));
}

torch::Tensor self_loop_fill(const torch::Tensor& edge_attr, const torch::Tensor& targets, int64_t n,
                             const std::string& reduce) {
  // 16-bit sums and means in fp32, rounded once: torch's scatter accumulates in the tensor's own
  // type (f16 atomics into a hub on CUDA, and sums that stop growing near 2048), as the Python
  // layer's self_loop_edge_attr explains.
  const auto type = edge_attr.scalar_type();
  const bool wide = (reduce == "sum" || reduce == "mean") && (type == torch::kHalf || type == torch::kBFloat16);
  const auto src = wide ? edge_attr.to(torch::kFloat) : edge_attr;
  // One more row than loops: edges whose target is n (excluded ones) land there and are dropped.
  auto fill = reduce == "prod" ? torch::ones({n + 1, src.size(1)}, src.options())
                               : torch::zeros({n + 1, src.size(1)}, src.options());
  fill = fill.scatter_reduce(0, targets.to(torch::kLong).view({-1, 1}).expand_as(src), src, reduce,
                             /*include_self=*/false).slice(0, 0, n);
  return wide ? fill.to(type) : fill;
}

torch::Tensor GATv2ConvImpl::forward(const torch::Tensor& x, const pt::Graph& graph, const torch::Tensor& edge_attr) {
  pt::check_homogeneous("GATv2Conv", x, options.in_channels(), in_channels_dst(), graph, lin_l->weight);
  return propagate(x, x, graph, edge_attr, false).out;
}

AttentionWeights GATv2ConvImpl::forward_with_attention(const torch::Tensor& x, const pt::Graph& graph,
                                                       const torch::Tensor& edge_attr) {
  pt::check_homogeneous("GATv2Conv", x, options.in_channels(), in_channels_dst(), graph, lin_l->weight);
  return propagate(x, x, graph, edge_attr, true);
}

torch::Tensor GATv2ConvImpl::forward(const torch::Tensor& x, const torch::Tensor& edge_index, const torch::Tensor& edge_attr) {
  pt::check_node_features("GATv2Conv", x, options.in_channels(), lin_l->weight);
  return pt::forward_edge_index(*this, x, edge_index, edge_attr);
}

torch::Tensor GATv2ConvImpl::forward(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                                     const torch::Tensor& edge_attr) {
  pt::check_bipartite("GATv2Conv", x_src, options.in_channels(), x_dst, in_channels_dst(), graph, lin_l->weight);
  return propagate(x_src, x_dst, graph, edge_attr, false).out;
}

AttentionWeights GATv2ConvImpl::forward_with_attention(const torch::Tensor& x_src, const torch::Tensor& x_dst,
                                                       const pt::Graph& graph, const torch::Tensor& edge_attr) {
  pt::check_bipartite("GATv2Conv", x_src, options.in_channels(), x_dst, in_channels_dst(), graph, lin_l->weight);
  return propagate(x_src, x_dst, graph, edge_attr, true);
}

// The layer on checked node features (x_dst is x_src for a homogeneous call).
AttentionWeights GATv2ConvImpl::propagate(const torch::Tensor& x_src, const torch::Tensor& x_dst, const pt::Graph& graph,
                                          const torch::Tensor& edge_attr_in, bool want_alpha) {
  auto ea = pt::layer_edge_attr("GATv2Conv", edge_attr_in, options.edge_dim(), graph.nnz());
  if (ea.defined() && options.add_self_loops()) ea = looped_edge_attr(graph, ea);
  const int64_t H = options.heads(), C = options.out_channels();
  const auto g = options.add_self_loops() ? looped(graph) : graph;
  // One projection when the weights and the input are shared (lin_r is lin_l then); those reading
  // one tensor as one op (projections.hpp: tessera's tensor-core kernel on CUDA fp32).
  const bool shared = options.share_weights() && x_dst.is_same(x_src);
  std::vector<std::pair<torch::nn::Linear, torch::Tensor>> pairs{{lin_l, x_src}};
  if (!shared) pairs.emplace_back(lin_r, x_dst);
  if (res) pairs.emplace_back(res, x_dst);
  const std::vector<torch::Tensor> ys = pt::project(pairs);
  const torch::Tensor& x_l = ys[0];
  const torch::Tensor& x_r = shared ? x_l : ys[1];
  const pt::AttentionGraph ag = pt::attention_graph(g);
  pt::AttentionOptions o;
  o.kind = "gatv2";
  o.heads = H;
  o.negative_slope = options.negative_slope();
  o.dropout = is_training() ? options.dropout() : 0.0;
  if (o.dropout > 0) o.seed = dropout_seed();
  o.return_alpha = want_alpha;
  o.alpha_after_dropout = true;  // PyG's GATv2Conv returns alpha after its dropout
  // Concatenated heads: the bias is added in the attention kernels' own write of out.
  const bool fused_bias = options.concat() && bias.defined();
  auto [out, lse, alpha] = pt::attention(ag, x_r, x_l, torch::Tensor(), att.reshape({-1}), o, ea,
                                         lin_edge ? lin_edge->weight : torch::Tensor(),
                                         fused_bias ? bias : torch::Tensor());
  if (!options.concat()) out = out.view({-1, H, C}).mean(1);
  if (res) out = pt::add_to_fresh(out, ys.back());
  if (bias.defined() && !fused_bias) out = pt::add_to_fresh(out, bias);
  return {out, g, want_alpha ? alpha : torch::Tensor()};
}

void GATv2ConvImpl::pretty_print(std::ostream& stream) const {
  stream << "tessera::nn::GATv2Conv(" << pt::in_channels_text(options.in_channels(), in_channels_dst()) << ", "
         << options.out_channels() << ", heads=" << options.heads() << ")";
}

// ---- the "gatv2" model: layers x GATv2Conv (heads concatenated; one head last), ELU ----
namespace {
ModelRegistrar gatv2_registrar(
    "gatv2", "GATv2 (Brody et al.): stacked GATv2Conv (--heads, default 8), ELU, dropout", [](const ModelConfig& c) {
      return attention_model<GATv2Conv>("gatv2", c, 8, [dropout = c.dropout](int64_t in, int64_t out, int64_t H, bool last) {
        return GATv2Conv(GATv2ConvOptions(in, out).heads(last ? 1 : H).dropout(dropout));
      });
    });
}  // namespace

}  // namespace tessera::nn
