"""tessera.nn.SAGEConv: a drop-in for torch_geometric.nn.SAGEConv (PyG 2.x) on tessera's
degree-aware segment reduce.

Same constructor (in_channels (an int, or (source, target) widths for bipartite input),
out_channels, aggr='mean', normalize=False, root_weight=True, project=False, bias=True), same
parameters and state_dict (``lin_l.weight``, ``lin_l.bias`` when bias, ``lin_r.weight`` when
root_weight (no bias), ``lin.weight``/``lin.bias`` when project), same forward(x, edge_index,
size=None), x a tensor or a pair (x_src, x_dst) (x_dst may be None: no root term):
x_src = relu(lin(x_src)) if project; out = lin_l(AGGR_{j->i} x_src[j]); out += lin_r(x_dst) if
root_weight; L2-normalize rows if normalize. Aggregation on the raw inputs
before lin_l, no self-loops, 0 for nodes without in-neighbours, duplicate edges counted per
occurrence. aggr in 'max', 'min', 'sum' ('add'), 'mean'. Ties in max/min route the gradient to the
smallest source index (PyG's scatter picks an unspecified one), so compare with PyG on tie-free
inputs. edge_index may be a [2, E] tensor, a tessera.Graph or a sparse adjacency adj_t (rows =
targets) as PyG takes it: torch.sparse COO or CSR (values all 1: PyG would weight the messages by
other values) or torch_sparse.SparseTensor (values ignored, as PyG does).
"""
from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from ..graph import Graph, GraphCache, check_graph_size, is_sparse_adjacency, is_torch_sparse_tensor
from ._compile import eager_under_compile
from ._inputs import node_feature_pair, node_features, widths
from ._linear import linear, linear_add

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


@eager_under_compile  # torch.compile: the layer outside the graph (_compile.py)
class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels: Union[int, Tuple[int, int]], out_channels: int, aggr: str = "mean",
                 normalize: bool = False, root_weight: bool = True, project: bool = False, bias: bool = True,
                 **kwargs):
        super().__init__()
        if not isinstance(aggr, str) or aggr not in _AGGR:
            raise NotImplementedError(f"tessera SAGEConv supports aggr in max, min, sum, mean (got {aggr!r})")
        flow = kwargs.pop("flow", "source_to_target")
        if flow != "source_to_target" or kwargs:
            raise NotImplementedError(f"tessera SAGEConv: unsupported arguments flow={flow!r} {sorted(kwargs)}")
        in_src, in_dst = widths(in_channels)
        if not all(isinstance(c, int) and c > 0 for c in (in_src, in_dst)):
            raise ValueError(f"tessera SAGEConv needs positive int in_channels (lazy -1 is not supported), "
                             f"got {in_channels}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.aggr = aggr
        self.normalize = normalize
        self.root_weight = root_weight
        self.project = project
        self._graph_cache = GraphCache()  # the CSR of the last edge_index, while it is unchanged
        if project:
            self.lin = torch.nn.Linear(in_src, in_src, bias=True)
        self.lin_l = torch.nn.Linear(in_src, out_channels, bias=bias)
        if root_weight:
            self.lin_r = torch.nn.Linear(in_dst, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        # PyG's Linear default init (kaiming_uniform a=sqrt(5), bias U(+-1/sqrt(fan_in))) is torch's.
        if self.project:
            self.lin.reset_parameters()
        self.lin_l.reset_parameters()
        if self.root_weight:
            self.lin_r.reset_parameters()

    def forward(self, x: Union[Tensor, Tuple[Tensor, Optional[Tensor]]], edge_index,
                size: Optional[Tuple[int, int]] = None) -> Tensor:
        x_src, x_dst = self._node_features(x)
        n_src = x_src.size(0)
        n_dst = x_dst.size(0) if x_dst is not None else n_src  # PyG: square unless told otherwise
        if size is not None:
            if (size[0] is not None and size[0] != n_src) or (x_dst is not None and size[1] not in (None, n_dst)):
                raise ValueError(f"SAGEConv: size {tuple(size)} does not match x ({n_src} sources"
                                 + (f", {n_dst} targets)" if x_dst is not None else ")"))
            n_dst = n_dst if size[1] is None else int(size[1])
        if isinstance(edge_index, Graph):
            g = edge_index
        elif is_sparse_adjacency(edge_index):
            g = self._graph_cache.get(edge_index, (n_src, n_dst), lambda: _unweighted(edge_index))
        elif isinstance(edge_index, Tensor):
            g = self._graph_cache.get(edge_index, (n_src, n_dst),
                                      lambda: Graph.from_edge_index(edge_index, num_nodes=n_dst, num_src=n_src))
        else:
            raise TypeError("SAGEConv: edge_index must be a [2, E] tensor, a sparse adjacency or a tessera.Graph, "
                            f"got {type(edge_index).__name__}")
        check_graph_size("SAGEConv", g, n_dst, n_src)
        src = linear(self.lin, x_src).relu() if self.project else x_src
        out = linear(self.lin_l, segment_reduce(g, src, self.aggr)[0])
        if self.root_weight and x_dst is not None:
            out = linear_add(self.lin_r, x_dst, out)  # no second [N, out] buffer where the types allow
        if self.normalize:
            out = torch.nn.functional.normalize(out, p=2.0, dim=-1)
        return out

    def _node_features(self, x) -> Tuple[Tensor, Optional[Tensor]]:
        """(x_src, x_dst) from x or a pair; PyG's (x_src, None) has no root term."""
        if isinstance(x, tuple) and len(x) == 2 and x[1] is None:
            src = widths(self.in_channels)[0]
            return node_features("SAGEConv", x[0], src, "x[0] (sources)", self.lin_l.weight), None
        return node_feature_pair("SAGEConv", x, self.in_channels, self.lin_l.weight)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, aggr={self.aggr})"
