#pragma once
// The attention family's torch ops (schemas and kernels in attention_op.cpp):
//   tessera::attention(rowptr, col, query, key, value?, att?, heads, kind, negative_slope, scale,
//                      dropout, seed, return_alpha, alpha_after_dropout, t_rowptr?, t_col?, t_perm?,
//                      symmetric, graph_id, edge_attr?, edge_weight?, bias?, residual?) -> (out, lse, alpha)
//     Fused GATv2 / Graph Transformer attention (ops/attention.hpp): query [N_dst, H*C],
//     key/value [N_src, H*C], or [N_src, C] for one slice shared by the heads (multi-query attention,
//     the Transformer without edge features; their gradients sum the heads'), att [H*C] (GATv2, any
//     float dtype); out [N_dst, H*C], lse
//     [N_dst, H] and alpha [nnz, H] (empty unless return_alpha) in the accumulation type.
//     Autograd: query, key, value and att get gradients from the fused backward, which walks
//     the transpose (t_* when given, e.g. a Graph's memoized one; else built per call) or A
//     itself when symmetric. alpha is not differentiable.
//     edge_attr [nnz, D] (in CSR entry order) and edge_weight [H*C, D] (lin_edge.weight): edge
//     features projected inside the kernels (CPU and CUDA), both differentiable. The backward
//     does not keep out, so a caller may add into it in place (add_to_fresh).
//     bias [H*C]: added to every row of out in the kernels' own write (GATv2's bias: no second
//     pass over out, no add node); its gradient is dout's column sums.
//     residual [N_dst, H*C]: added to out likewise, row by row (TransformerConv's skip where it is a
//     column block of the q/k/v product); its gradient is dout.
//   tessera::attention_backward(...) -> (dquery, dkey, dvalue, datt, dedge_attr, dedge_weight).
#include <ATen/ATen.h>

#include <string>
#include <tuple>

#include "tessera/torch/graph.hpp"

namespace tessera::pt {

struct AttentionGraph {
  at::Tensor rowptr, col;            // rows = targets
  int64_t num_src = 0;
  at::Tensor t_rowptr, t_col, t_perm;  // optional transpose (all or none)
  bool symmetric = false;
  int64_t graph_id = 0;
};

struct AttentionOptions {
  std::string kind = "transformer";   // "gatv2" | "transformer"
  int64_t heads = 1;
  double negative_slope = 0.2, scale = 0, dropout = 0;
  int64_t seed = 0;
  bool return_alpha = false, alpha_after_dropout = false;
};

// A layer's graph as the attention ops take it, with its memoized transpose only when autograd is
// recording (the backward's source-side pass walks it; inference never builds it).
AttentionGraph attention_graph(const Graph& g);

// Through the dispatcher (autograd-aware). value: undefined for GATv2, att: undefined for the
// Transformer; edge_attr [nnz, D] in g's entry order and edge_weight [H*C, D], or both undefined;
// bias [H*C] and residual [N_dst, H*C] added to out, or undefined. Returns (out, lse, alpha).
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention(const AttentionGraph& g, const at::Tensor& query,
                                                         const at::Tensor& key, const at::Tensor& value,
                                                         const at::Tensor& att, const AttentionOptions& o,
                                                         const at::Tensor& edge_attr = {},
                                                         const at::Tensor& edge_weight = {},
                                                         const at::Tensor& bias = {},
                                                         const at::Tensor& residual = {});

// A layer's edge_attr checked against its edge_dim (0: none) and the graph's entries: [nnz,
// edge_dim] (a 1-D one as [nnz, 1]), or undefined when the layer has no edge features.
at::Tensor layer_edge_attr(const char* who, const at::Tensor& edge_attr, int64_t edge_dim, int64_t nnz);

// out + other for an output the layer just made (the attention op's, or the mean over heads,
// neither kept by its backward): in place when the sum keeps out's dtype and shape, so no second
// [N, H*C] buffer is written or held until the backward; else out of place.
inline at::Tensor add_to_fresh(at::Tensor out, const at::Tensor& other) {
  if (at::result_type(out, other) != out.scalar_type() || at::infer_size(out.sizes(), other.sizes()) != out.sizes().vec())
    return out + other;
  return out.add_(other);
}

}  // namespace tessera::pt
