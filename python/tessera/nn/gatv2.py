"""tessera.nn.GATv2Conv: a drop-in for torch_geometric.nn.GATv2Conv (PyG 2.x) on tessera's fused
attention (no per-edge tensors in forward or backward unless attention weights are requested).

Same constructor (in_channels, out_channels, heads, concat, negative_slope, dropout,
add_self_loops, edge_dim, fill_value, bias, share_weights, residual), same parameters and
state_dict layout (``lin_l.weight/bias``, ``lin_r.weight/bias`` (shared when share_weights),
``att`` [1, H, C], ``res.weight``, ``bias``), same forward:
x_l = lin_l(x_src), x_r = lin_r(x_dst); e_ij = att . LeakyReLU(x_r[i] + x_l[j]); softmax over the
in-edges of i; dropout on alpha; out_i = sum_j alpha_ij x_l[j]; concat or mean over heads;
+ res(x_dst); + bias. With add_self_loops, existing self-loops are removed and one per node added.

Edge features (``edge_dim``/``edge_attr``): ``lin_edge`` (glorot, no bias) projects them and
lin_edge(e_ij) is added inside the LeakyReLU, self-loops filled with ``fill_value`` ('mean' of the
target's in-edge features by default). The fused kernels (CPU and CUDA) project each edge's
features where they use them: no E x H x C tensor, in forward or backward.

edge_index may also be a tessera.Graph or, as in PyG, a sparse adjacency adj_t (rows = targets):
torch.sparse COO or CSR, or torch_sparse.SparseTensor. With a torch.sparse adj_t the attention
weights come back as PyG 2.8 returns them: (adj_t's attended structure with alpha [nnz, H] as
values, alpha in that order).

Not supported (raises): lazy in_channels (-1); edge_attr with a tessera.Graph or a sparse
adjacency as edge_index; return_attention_weights with a torch_sparse.SparseTensor.
"""
import math
from typing import Optional, Tuple, Union

import torch
from torch import Tensor
from torch.nn import Parameter

from ..graph import (Graph, GraphCache, check_graph_size, is_sparse_adjacency, is_torch_sparse_tensor,
                     sparse_with_values)
from ._compile import eager_under_compile
from ._inputs import edge_features, edge_index_shape, layer_inputs, node_feature_pair
from ._linear import PreparedWeights, add_to_fresh, project

_ops = torch.ops.tessera


def _glorot(t: Tensor):
    # PyG's glorot: U(-a, a), a = sqrt(6 / (size(-2) + size(-1))).
    a = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
    with torch.no_grad():
        t.uniform_(-a, a)


def _pyg_linear(in_channels: int, out_channels: int, bias: bool, glorot: bool) -> torch.nn.Linear:
    lin = torch.nn.Linear(in_channels, out_channels, bias=bias)
    _reset_linear(lin, glorot)
    return lin


def _reset_linear(lin: torch.nn.Linear, glorot: bool):
    """PyG Linear's initializers: glorot or kaiming_uniform(a=sqrt(5)) weights, U(+-1/sqrt(in)) bias."""
    if glorot:
        _glorot(lin.weight)
    else:
        torch.nn.init.kaiming_uniform_(lin.weight, a=math.sqrt(5))
    if lin.bias is not None:
        bound = 1.0 / math.sqrt(lin.in_features)
        with torch.no_grad():
            lin.bias.uniform_(-bound, bound)


class AttentionGraph:
    """The CSR structure one attention call runs over, plus the map back to edge order.

    What it holds stays resident while a layer caches it (a training loop's whole run), so it
    keeps index arrays in the CSR's own (compact, usually int32) type and nothing it can derive:
    no copy of the edges (the edge order is rebuilt from the CSR and perm when attention weights
    are asked for); the transpose is its tessera.Graph's memo (permutation in the same type)."""

    def __init__(self, rowptr: Tensor, col: Tensor, num_src: int, perm: Optional[Tensor] = None,
                 graph: Optional[Graph] = None):
        self.rowptr, self.col, self.num_src = rowptr, col, num_src
        self.perm = perm              # CSR entry k holds edge perm[k] of the attended edge list
        self.graph = graph if graph is not None else Graph(rowptr, col, None, num_src)
        # GATv2 with self-loops and edge features (set by align_edge_features): each input edge's
        # target, or the spill row num_loops for a removed self-loop (the fill's scatter index);
        # and the row of cat([edge_attr, loop features]) each CSR entry takes (None: in order).
        self.fill_targets: Optional[Tensor] = None
        self.ea_source: Optional[Tensor] = None
        self._selector: Optional[Graph] = None  # memo of select()

    @classmethod
    def of(cls, graph: Graph) -> "AttentionGraph":
        """A tessera.Graph's own CSR (rows = targets), entries in its order."""
        return cls(graph.rowptr, graph.col, graph.cols, graph=graph)

    @classmethod
    def from_edge_index(cls, edge_index: Tensor, num_dst: int, num_src: int) -> "AttentionGraph":
        rowptr, col, perm = _ops.edge_index_to_csr(edge_index, num_dst, num_src, True)
        if torch.equal(perm, torch.arange(perm.numel(), device=perm.device, dtype=perm.dtype)):
            return cls(rowptr, col, num_src)  # edges already sorted by target: nothing to permute
        return cls(rowptr, col, num_src, perm.to(col.dtype))

    def select(self, table: Tensor, source: Tensor) -> Tensor:
        """Rows source[k] of table [R, D], autograd-aware: an SpMM with the 0/1 selection matrix
        whose row k has one entry, at column source[k] (the gradient flows back through its
        transpose, a scatter). torch's index_select on CUDA (torch 2.x) spends one thread block per
        gathered row: 10.2 ms for the 17M rows of R-MAT 2^20's edge features, whatever their
        width, dtype or order (H200), where the SpMM moves the same bytes with threads over
        (row, feature)."""
        sel = self._selector
        if sel is None or sel.col is not source or sel.cols != table.size(0):
            n = source.numel()
            rowptr = torch.arange(n + 1, device=source.device, dtype=source.dtype)
            sel = self._selector = Graph(rowptr, source, None, table.size(0))
        return sel.spmm(table)

    def entry_features(self, edge_attr: Tensor) -> Tensor:
        """edge_attr [E, D] of the edges this graph was built from, in CSR entry order."""
        return edge_attr if self.perm is None else self.select(edge_attr, self.perm)

    def align_edge_features(self, keep: Tensor, targets: Tensor, num_loops: int):
        """Prepares edge_features() for a graph built by remove_and_add_self_loops: `keep` marks
        the input edges it kept, `targets` are the input edges' targets."""
        # Removed self-loops go to the spill row num_loops, and so does a target past the loops (a
        # bipartite graph with more targets than sources), which has no loop to fill; int64, as
        # torch's scatter wants, whatever edge_index's type.
        self.fill_targets = targets.long().masked_fill(~keep, num_loops).clamp_(max=num_loops)
        n_edges = keep.numel()
        if self.perm is None and bool(keep.all()):
            return  # the CSR holds the edges in input order, then the loops: no gather
        source = torch.cat([keep.nonzero().squeeze(1),
                            torch.arange(n_edges, n_edges + num_loops, device=keep.device)])
        if self.perm is not None:
            source = source.index_select(0, self.perm.long())
        self.ea_source = source.to(self.col.dtype)

    def edge_features(self, edge_attr: Tensor, num_loops: int, fill_value) -> Tensor:
        """The features of every CSR entry: the kept input edges' rows of edge_attr and the
        self-loops' fill, in one gather (select; no boolean-mask copy, which also waits on the
        device for its size, and no second gather into CSR order)."""
        loops = self_loop_edge_attr(edge_attr, self.fill_targets, num_loops, fill_value)
        ea = torch.cat([edge_attr, loops], dim=0)
        return ea if self.ea_source is None else self.select(ea, self.ea_source)

    def transpose(self):
        t_rowptr, t_col, perm, _ = self.graph.transpose()
        return t_rowptr, t_col, perm

    def attention_weights(self, alpha: Tensor) -> Tuple[Tensor, Tensor]:
        """(edge_index, alpha) in the order of the attended edge list (PyG's return value), from
        alpha in CSR order."""
        ei = graph_edge_index(self.graph)
        if self.perm is None:
            return ei, alpha
        perm = self.perm.long()
        out_ei, out_alpha = torch.empty_like(ei), torch.empty_like(alpha)
        out_ei[:, perm] = ei
        out_alpha[perm] = alpha
        return out_ei, out_alpha


def remove_and_add_self_loops(edge_index: Tensor, num_nodes: int) -> Tuple[Tensor, Tensor]:
    """PyG's remove_self_loops then add_self_loops(num_nodes): loops appended after the edges.
    Returns the new edges and the mask of the input edges they keep."""
    keep = edge_index[0] != edge_index[1]
    loops = torch.arange(num_nodes, device=edge_index.device, dtype=edge_index.dtype)
    return torch.cat([edge_index[:, keep], torch.stack([loops, loops])], dim=1), keep


def graph_edge_index(g: Graph) -> Tensor:
    """edge_index [2, nnz] (sources; targets) of a tessera.Graph, in CSR order."""
    rows = torch.repeat_interleave(torch.arange(g.rows, device=g.device, dtype=torch.long),
                                   (g.rowptr[1:] - g.rowptr[:-1]).long())
    return torch.stack([g.col.long(), rows])


def sparse_adjacency_graph(layer: str, adj_t, num_dst: int, num_src: int) -> Graph:
    """The tessera.Graph of a sparse adjacency given in place of edge_index (rows = targets),
    checked against the layer's node counts."""
    return check_graph_size(layer, Graph.from_sparse(adj_t), num_dst, num_src)


def check_sparse_attention_request(layer: str, edge_index, edge_attr, return_attention_weights) -> None:
    """What the attention layers do not take with a sparse adjacency, refused before any work."""
    if not is_sparse_adjacency(edge_index):
        return
    if edge_attr is not None:
        raise NotImplementedError(f"tessera {layer}: edge_attr with a sparse adjacency is not supported; "
                                  "pass edge_index as a [2, E] tensor")
    if return_attention_weights and not is_torch_sparse_tensor(edge_index):
        raise NotImplementedError(f"tessera {layer}: return_attention_weights with a torch_sparse.SparseTensor "
                                  "is not supported; pass a torch.sparse tensor or edge_index")


def sparse_attention_weights(adj_t: Tensor, attention: Tuple[Tensor, Tensor], size) -> Tuple[Tensor, Tensor]:
    """PyG's attention weights for a torch.sparse adj_t: the attended adjacency in adj_t's layout with
    alpha [nnz, H] as its values (sorted by target, then source), and alpha in that order.
    attention is (edge_index, alpha) of the attended edges, as AttentionGraph.attention_weights gives."""
    ei, alpha = attention
    adj = sparse_with_values(adj_t, ei[1], ei[0], alpha, size)
    return adj, adj.values()


def fused_attention(kind: str, g: AttentionGraph, query: Tensor, key: Tensor, value: Optional[Tensor],
                    att: Optional[Tensor], heads: int, negative_slope: float = 0.2, scale: float = 0.0,
                    dropout: float = 0.0, training: bool = False, return_alpha: bool = False,
                    alpha_after_dropout: bool = False, edge_attr: Optional[Tensor] = None,
                    edge_weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
                    residual: Optional[Tensor] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """out [N_dst, H*C] (and alpha [nnz, H] in CSR order when asked) of one fused attention.
    att: GATv2's attention vector, H*C values in any contiguous shape (the layer's [1, H, C]
    parameter as it is: a reshape would be one more op and autograd node per call).
    edge_attr [nnz, D] in CSR order and edge_weight [H*C, D] (lin_edge.weight): edge features,
    projected inside the kernels. bias [H*C]: added to every row of out in the kernels' write;
    residual [N_dst, H*C]: its rows added likewise (TransformerConv's skip)."""
    p = dropout if training else 0.0
    seed = int(torch.randint(0, 2 ** 62, (1,)).item()) if p > 0 else 0
    t_rowptr = t_col = t_perm = None
    if torch.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (query, key, value, att, edge_attr, edge_weight, bias)):
        t_rowptr, t_col, t_perm = g.transpose()
    out, _, alpha = _ops.attention(g.rowptr, g.col, query, key, value, att, heads, kind, negative_slope, scale,
                                   p, seed, return_alpha, alpha_after_dropout, t_rowptr, t_col, t_perm, False,
                                   g.graph.id, edge_attr, edge_weight, bias, residual)
    return out, (alpha if return_alpha else None)


def self_loop_edge_attr(edge_attr: Tensor, targets: Tensor, num_nodes: int, fill_value) -> Tensor:
    """Features of the appended self-loops, as torch_geometric.utils.add_self_loops builds them
    from the remaining edges' features edge_attr and their targets; an edge whose target is
    num_nodes (the spill row: a removed self-loop, or a target with no loop) takes no part."""
    shape = (num_nodes,) + tuple(edge_attr.shape[1:])
    if fill_value is None:
        return edge_attr.new_ones(shape)
    if isinstance(fill_value, (int, float)):
        return edge_attr.new_full(shape, float(fill_value))
    if isinstance(fill_value, Tensor):
        return fill_value.to(edge_attr).expand(shape).clone()
    if not isinstance(fill_value, str):
        raise TypeError(f"GATv2Conv: unsupported fill_value {fill_value!r}")
    idx = targets.view((-1,) + (1,) * (edge_attr.dim() - 1)).expand_as(edge_attr)
    reduce = {"add": "sum", "sum": "sum", "mean": "mean", "max": "amax", "min": "amin", "mul": "prod"}.get(fill_value)
    if reduce is None:
        raise ValueError(f"GATv2Conv: unsupported fill_value '{fill_value}'")
    # 16-bit sums and means in fp32: torch's scatter accumulates with atomics in the tensor's own
    # type, which on a skewed graph (10^5 edges into one node) is slow and rounds every add.
    # Exact reductions (max, min) and products stay in the input type.
    wide = reduce in ("sum", "mean") and edge_attr.dtype in (torch.float16, torch.bfloat16)
    src = edge_attr.float() if wide else edge_attr
    spill = (num_nodes + 1,) + shape[1:]  # one more row takes the excluded edges
    init = src.new_ones(spill) if reduce == "prod" else src.new_zeros(spill)
    out = init.scatter_reduce(0, idx, src, reduce=reduce, include_self=False)[:num_nodes]
    return out.to(edge_attr.dtype) if wide else out


@eager_under_compile  # torch.compile: the layer outside the graph (_compile.py)
class GATv2Conv(torch.nn.Module):
    def __init__(self, in_channels: Union[int, Tuple[int, int]], out_channels: int, heads: int = 1,
                 concat: bool = True, negative_slope: float = 0.2, dropout: float = 0.0,
                 add_self_loops: bool = True, edge_dim: Optional[int] = None, fill_value="mean",
                 bias: bool = True, share_weights: bool = False, residual: bool = False, **kwargs):
        super().__init__()
        in_l, in_r = layer_inputs("GATv2Conv", in_channels, kwargs)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.edge_dim = edge_dim
        self.fill_value = fill_value
        self.share_weights = share_weights
        self.residual = residual
        self._graph_cache = GraphCache()
        self._prepared = PreparedWeights()  # the projections without autograd (_linear.PreparedWeights)
        self.lin_l = _pyg_linear(in_l, heads * out_channels, bias, glorot=True)
        self.lin_r = self.lin_l if share_weights else _pyg_linear(in_r, heads * out_channels, bias, glorot=True)
        self.att = Parameter(torch.empty(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = _pyg_linear(edge_dim, heads * out_channels, False, glorot=True)
        else:
            self.register_parameter("lin_edge", None)
        total = out_channels * (heads if concat else 1)
        if residual:
            self.res = _pyg_linear(in_r, total, False, glorot=True)
        else:
            self.register_parameter("res", None)
        if bias:
            self.bias = Parameter(torch.empty(total))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_linear(self.lin_l, True)
        if not self.share_weights:
            _reset_linear(self.lin_r, True)
        if self.lin_edge is not None:
            _reset_linear(self.lin_edge, True)
        if self.res is not None:
            _reset_linear(self.res, True)
        _glorot(self.att)
        if self.bias is not None:
            with torch.no_grad():
                self.bias.zero_()

    def _graph(self, edge_index, num_src: int, num_dst: int) -> AttentionGraph:
        if isinstance(edge_index, Graph) and not self.add_self_loops:
            return AttentionGraph.of(edge_index)
        sparse = is_sparse_adjacency(edge_index)
        if not (sparse or isinstance(edge_index, (Tensor, Graph))):
            raise TypeError("GATv2Conv: edge_index must be a [2, E] tensor, a sparse adjacency or a "
                            f"tessera.Graph, got {type(edge_index).__name__}")

        def build():
            if sparse:  # PyG: torch.sparse loses its self-loops and gains one per node; SparseTensor set_diag
                g = sparse_adjacency_graph("GATv2Conv", edge_index, num_dst, num_src)
                if not self.add_self_loops:
                    return AttentionGraph.of(g)
                ei = graph_edge_index(g)
            else:
                ei = graph_edge_index(edge_index) if isinstance(edge_index, Graph) else \
                    edge_index_shape("GATv2Conv", edge_index)
            if not self.add_self_loops:
                return AttentionGraph.from_edge_index(ei, num_dst, num_src)
            looped, keep = remove_and_add_self_loops(ei, min(num_src, num_dst))
            g = AttentionGraph.from_edge_index(looped, num_dst, num_src)
            if self.lin_edge is not None:  # edge_attr comes with every call: keep its alignment
                g.align_edge_features(keep, ei[1], min(num_src, num_dst))
            return g
        return self._graph_cache.get(edge_index, (num_src, num_dst, self.add_self_loops), build)

    def forward(self, x: Union[Tensor, Tuple[Tensor, Optional[Tensor]]], edge_index,
                edge_attr: Optional[Tensor] = None, return_attention_weights: Optional[bool] = None):
        H = self.heads
        want_alpha = bool(return_attention_weights)
        check_sparse_attention_request("GATv2Conv", edge_index, edge_attr, want_alpha)
        if isinstance(x, tuple) and len(x) == 2 and x[1] is None:
            raise NotImplementedError("tessera GATv2Conv: x = (x_src, None) is not supported")
        x_src, x_dst = node_feature_pair("GATv2Conv", x, self.in_channels, self.lin_l.weight)
        if edge_attr is not None:  # checked before any projection runs
            edge_attr = edge_features("GATv2Conv", edge_attr, edge_index, self.lin_edge)
        shared = self.share_weights and x_src is x_dst  # x_r is x_l
        # On the CPU the projections reading one tensor are one autograd node (_linear.project).
        pairs = [(self.lin_l, x_src)] + ([] if shared else [(self.lin_r, x_dst)]) + \
            ([(self.res, x_dst)] if self.res is not None else [])
        outs = project(pairs, getattr(self, "_prepared", None))  # absent on modules pickled before it
        x_l = outs[0]
        x_r = x_l if shared else outs[1]
        res = outs[-1] if self.res is not None else None
        g = self._graph(edge_index, x_l.size(0), x_r.size(0))
        ea = None  # edge features in the CSR's entry order, projected inside the kernels
        if edge_attr is not None and self.add_self_loops:  # kept edges, one loop per node with fill_value
            ea = g.edge_features(edge_attr, min(x_l.size(0), x_r.size(0)), self.fill_value)
        elif edge_attr is not None:
            ea = g.entry_features(edge_attr)
        # Concatenated heads: the bias is added in the attention kernels' own write of out (no
        # second pass over [N, H*C], no add node in the backward).
        fused_bias = self.concat and self.bias is not None
        out, alpha = fused_attention("gatv2", g, x_r, x_l, None, self.att, H, self.negative_slope, 0.0,
                                     self.dropout, self.training, want_alpha, alpha_after_dropout=True, edge_attr=ea,
                                     edge_weight=self.lin_edge.weight if ea is not None else None,
                                     bias=self.bias if fused_bias else None)
        attention = g.attention_weights(alpha) if want_alpha else None
        if attention is not None and is_sparse_adjacency(edge_index):
            attention = sparse_attention_weights(edge_index, attention, (x_r.size(0), x_l.size(0)))
        return self._finish(out, res, attention, fused_bias)

    def _finish(self, out: Tensor, res: Optional[Tensor], attention, bias_added: bool):
        if not self.concat:
            out = out.view(-1, self.heads, self.out_channels).mean(dim=1)
        if res is not None:
            out = add_to_fresh(out, res)
        if self.bias is not None and not bias_added:
            out = add_to_fresh(out, self.bias)
        return (out, attention) if attention is not None else out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, heads={self.heads})"
