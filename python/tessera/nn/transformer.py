"""tessera.nn.TransformerConv: a drop-in for torch_geometric.nn.TransformerConv (PyG 2.x) on
tessera's fused attention (no per-edge tensors unless attention weights are requested).

Same constructor (in_channels, out_channels, heads, concat, beta, dropout, edge_dim, bias,
root_weight), parameters and state_dict layout (``lin_key``, ``lin_query``, ``lin_value``,
``lin_skip``, ``lin_beta``), same forward: q = lin_query(x_dst), k = lin_key(x_src),
v = lin_value(x_src); alpha = softmax(<q_i, k_j> / sqrt(C)) over the in-edges of i (no self-loops
added); dropout on alpha; out_i = sum_j alpha_ij v_j; concat or mean; root_weight adds
lin_skip(x_dst), gated by beta = sigmoid(lin_beta([out, x_r, out - x_r])) when beta=True.
Attention weights (return_attention_weights) are returned before dropout, as PyG does.

Edge features (``edge_dim``/``edge_attr``): e = lin_edge(edge_attr) (no bias) is added to k_j and
v_j as PyG does. The fused kernels (CPU and CUDA) project each edge's features where they use them:
no E x H x C tensor, in forward or backward.

edge_index may also be a tessera.Graph or, as in PyG, a sparse adjacency adj_t (rows = targets):
torch.sparse COO or CSR, or torch_sparse.SparseTensor; with a torch.sparse adj_t the attention
weights come back as PyG 2.8 returns them: (adj_t itself, alpha [nnz, H] in its CSR entry order).

Not supported (raises): lazy in_channels (-1); edge_attr with a sparse adjacency;
return_attention_weights with a torch_sparse.SparseTensor.
"""
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ..graph import Graph, GraphCache, is_sparse_adjacency
from ._linear import add_to_fresh, linear, linear_add, project
from ._inputs import layer_inputs, node_feature_pair
from .gatv2 import (AttentionGraph, _pyg_linear, _reset_linear, check_sparse_attention_request, fused_attention,
                    sparse_adjacency_graph)


class TransformerConv(torch.nn.Module):
    def __init__(self, in_channels: Union[int, Tuple[int, int]], out_channels: int, heads: int = 1,
                 concat: bool = True, beta: bool = False, dropout: float = 0.0, edge_dim: Optional[int] = None,
                 bias: bool = True, root_weight: bool = True, **kwargs):
        super().__init__()
        in_src, in_dst = layer_inputs("TransformerConv", in_channels, kwargs)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.beta = beta and root_weight
        self.root_weight = root_weight
        self.concat = concat
        self.dropout = dropout
        self.edge_dim = edge_dim
        self._graph_cache = GraphCache()
        self.lin_key = _pyg_linear(in_src, heads * out_channels, True, glorot=False)
        self.lin_query = _pyg_linear(in_dst, heads * out_channels, True, glorot=False)
        self.lin_value = _pyg_linear(in_src, heads * out_channels, True, glorot=False)
        if edge_dim is not None:
            self.lin_edge = _pyg_linear(edge_dim, heads * out_channels, False, glorot=False)
        else:
            self.register_parameter("lin_edge", None)
        width = heads * out_channels if concat else out_channels
        self.lin_skip = _pyg_linear(in_dst, width, bias, glorot=False)
        if self.beta:
            self.lin_beta = _pyg_linear(3 * width, 1, False, glorot=False)
        else:
            self.register_parameter("lin_beta", None)

    def reset_parameters(self):
        for lin in (self.lin_key, self.lin_query, self.lin_value, self.lin_edge, self.lin_skip, self.lin_beta):
            if lin is not None:
                _reset_linear(lin, False)

    def forward(self, x: Union[Tensor, Tuple[Tensor, Tensor]], edge_index, edge_attr: Optional[Tensor] = None,
                return_attention_weights: Optional[bool] = None):
        if (self.lin_edge is None) != (edge_attr is None):
            raise ValueError("TransformerConv: edge_attr must be given exactly when the layer has edge_dim")
        H = self.heads
        want_alpha = bool(return_attention_weights)
        check_sparse_attention_request("TransformerConv", edge_index, edge_attr, want_alpha)
        x = node_feature_pair("TransformerConv", x, self.in_channels)
        query, key, value, x_r = self._project(x)
        ea = edge_weight = None
        if edge_attr is not None:
            if not isinstance(edge_index, Tensor):
                raise TypeError("tessera TransformerConv: edge_attr needs edge_index as a [2, E] tensor, "
                                f"got {type(edge_index).__name__}")
            if edge_attr.size(0) != edge_index.size(1):
                raise ValueError(f"TransformerConv: edge_attr has {edge_attr.size(0)} rows but edge_index has "
                                 f"{edge_index.size(1)} edges")
            ea, edge_weight = (edge_attr.view(-1, 1) if edge_attr.dim() == 1 else edge_attr), self.lin_edge.weight
        n_dst, n_src = query.size(0), key.size(0)
        if isinstance(edge_index, Graph):
            g = AttentionGraph.of(edge_index)
        elif is_sparse_adjacency(edge_index):
            g = self._graph_cache.get(edge_index, (n_src, n_dst), lambda: AttentionGraph.of(
                sparse_adjacency_graph("TransformerConv", edge_index, n_dst, n_src)))
        elif isinstance(edge_index, Tensor):
            g = self._graph_cache.get(edge_index, (n_src, n_dst),
                                      lambda: AttentionGraph.from_edge_index(edge_index, n_dst, n_src))
        else:
            raise TypeError("TransformerConv: edge_index must be a [2, E] tensor, a sparse adjacency or a "
                            f"tessera.Graph, got {type(edge_index).__name__}")
        if ea is not None:
            ea = g.entry_features(ea)  # into the CSR's entry order
        out, alpha = fused_attention("transformer", g, query, key, value, None, H, 0.2, 0.0, self.dropout,
                                     self.training, want_alpha, alpha_after_dropout=False, edge_attr=ea,
                                     edge_weight=edge_weight)
        attention = g.attention_weights(alpha) if want_alpha else None
        if attention is not None and is_sparse_adjacency(edge_index):
            # PyG 2.8 returns a sparse adj_t itself (its values untouched) and alpha in its CSR order.
            attention = (edge_index, attention[1])
        return self._finish(out, x, attention, x_r)

    def _project(self, x):
        """q, k, v, and on the CPU the skip projection too (there the ones reading one tensor are one
        autograd node: tessera.nn._linear.project); elsewhere the skip waits for _finish, so it is
        not alive during the attention."""
        early_skip = self.root_weight and x[1].device.type == "cpu"
        pairs = [(self.lin_query, x[1]), (self.lin_key, x[0]), (self.lin_value, x[0])]
        if early_skip:
            pairs.append((self.lin_skip, x[1]))
        outs = project(pairs)
        return outs[0], outs[1], outs[2], outs[3] if early_skip else None

    def _finish(self, out: Tensor, x, attention, x_r: Optional[Tensor] = None):
        H, C = self.heads, self.out_channels
        if not self.concat:
            out = out.view(-1, H, C).mean(dim=1)
        if self.root_weight and self.lin_beta is None:  # out + lin_skip(x_dst): on CUDA one kernel
            out = add_to_fresh(out, x_r) if x_r is not None else linear_add(self.lin_skip, x[1], out)
        elif self.root_weight:
            if x_r is None:
                x_r = linear(self.lin_skip, x[1])
            b = self.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
            out = b * x_r + (1 - b) * out
        return (out, attention) if attention is not None else out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
