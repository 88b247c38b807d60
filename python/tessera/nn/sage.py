"""tessera.nn.SAGEConv: a drop-in for torch_geometric.nn.SAGEConv (PyG 2.x) on tessera's
degree-aware segment reduce.

Same constructor (in_channels, out_channels, aggr='mean', normalize=False, root_weight=True,
project=False, bias=True), same parameters and state_dict (``lin_l.weight``, ``lin_l.bias`` when
bias, ``lin_r.weight`` when root_weight (no bias), ``lin.weight``/``lin.bias`` when project), same
forward: x_src = relu(lin(x)) if project else x; out = lin_l(AGGR_{j->i} x_src[j]);
out += lin_r(x) if root_weight; L2-normalize rows if normalize. Aggregation on the raw inputs
before lin_l, no self-loops, 0 for nodes without in-neighbours, duplicate edges counted per
occurrence. aggr in 'max', 'min', 'sum' ('add'), 'mean'. Ties in max/min route the gradient to the
smallest source index (PyG's scatter picks an unspecified one), so compare with PyG on tie-free
inputs. edge_index may be a [2, E] tensor, a tessera.Graph or a sparse adjacency adj_t (rows =
targets) as PyG takes it: torch.sparse COO or CSR (values all 1: PyG would weight the messages by
other values) or torch_sparse.SparseTensor (values ignored, as PyG does).
"""
from typing import Tuple, Union

import torch
from torch import Tensor

from ..graph import Graph, is_sparse_adjacency, is_torch_sparse_tensor
from ._inputs import node_features
from .gatv2 import GraphCache
from ._linear import linear

_AGGR = {"max": "max", "min": "min", "sum": "sum", "add": "sum", "mean": "mean"}


def segment_reduce(graph: Graph, x: Tensor, reduce: str) -> Tuple[Tensor, Tensor]:
    """(out, arg): out[i] = REDUCE over in-neighbours j of x[j]; arg (max/min) the winning source."""
    return torch.ops.tessera.segment_reduce(graph.rowptr, graph.col, x, _AGGR[reduce], graph.id)


def _unweighted(adj_t) -> Graph:
    """The Graph of a sparse adjacency whose values SAGEConv may ignore: PyG drops a SparseTensor's
    values but multiplies the messages by a torch.sparse tensor's."""
    g = Graph.from_sparse(adj_t)
    if is_torch_sparse_tensor(adj_t) and g.values is not None and not bool((g.values == 1).all()):
        raise NotImplementedError("tessera SAGEConv: a torch.sparse adjacency whose values are not all 1 "
                                  "(PyG weights the messages by them) is not supported")
    return g


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, aggr: str = "mean", normalize: bool = False,
                 root_weight: bool = True, project: bool = False, bias: bool = True, **kwargs):
        super().__init__()
        if not isinstance(aggr, str) or aggr not in _AGGR:
            raise NotImplementedError(f"tessera SAGEConv supports aggr in max, min, sum, mean (got {aggr!r})")
        flow = kwargs.pop("flow", "source_to_target")
        if flow != "source_to_target" or kwargs:
            raise NotImplementedError(f"tessera SAGEConv: unsupported arguments flow={flow!r} {sorted(kwargs)}")
        if not isinstance(in_channels, int) or in_channels <= 0:
            raise ValueError(f"tessera SAGEConv needs a positive int in_channels (lazy/bipartite not supported), "
                             f"got {in_channels}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.aggr = aggr
        self.normalize = normalize
        self.root_weight = root_weight
        self.project = project
        self._graph_cache = GraphCache()  # the CSR of the last edge_index, while it is unchanged
        if project:
            self.lin = torch.nn.Linear(in_channels, in_channels, bias=True)
        self.lin_l = torch.nn.Linear(in_channels, out_channels, bias=bias)
        if root_weight:
            self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        # PyG's Linear default init (kaiming_uniform a=sqrt(5), bias U(+-1/sqrt(fan_in))) is torch's.
        if self.project:
            self.lin.reset_parameters()
        self.lin_l.reset_parameters()
        if self.root_weight:
            self.lin_r.reset_parameters()

    def forward(self, x: Tensor, edge_index: Union[Tensor, Graph]) -> Tensor:
        node_features("SAGEConv", x, self.in_channels)
        if isinstance(edge_index, Graph):
            g = edge_index
        elif is_sparse_adjacency(edge_index):
            g = self._graph_cache.get(edge_index, (x.size(0),), lambda: _unweighted(edge_index))
        elif isinstance(edge_index, Tensor):
            g = self._graph_cache.get(edge_index, (x.size(0),),
                                      lambda: Graph.from_edge_index(edge_index, num_nodes=x.size(0)))
        else:
            raise TypeError("SAGEConv: edge_index must be a [2, E] tensor, a sparse adjacency or a tessera.Graph, "
                            f"got {type(edge_index).__name__}")
        if g.rows != x.size(0) or g.cols != x.size(0):
            raise ValueError(f"SAGEConv: graph is {g.rows} x {g.cols} but x has {x.size(0)} nodes")
        src = linear(self.lin, x).relu() if self.project else x
        out = linear(self.lin_l, segment_reduce(g, src, self.aggr)[0])
        if self.root_weight:
            # + lin_r(x) accumulated by the GEMM into lin_l's output (beta = 1): no second
            # [N, out] buffer and no separate add pass (lin_r's weight is used directly).
            out = out.addmm_(x, self.lin_r.weight.t())
        if self.normalize:
            out = torch.nn.functional.normalize(out, p=2.0, dim=-1)
        return out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, aggr={self.aggr})"
