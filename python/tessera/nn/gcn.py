"""tessera.nn.GCNConv: a drop-in for torch_geometric.nn.GCNConv (PyG 2.x) on tessera's SpMM.

Same constructor (in_channels, out_channels, improved, cached, add_self_loops, normalize, bias),
same parameters (``lin.weight`` [out, in], ``bias`` [out]), same forward order: x = lin(x), then
propagation with PyG's gcn_norm weights, then + bias. Inputs, as in PyG:

* ``edge_index`` [2, E] (sources; targets) with optional ``edge_weight`` [E]: self-loops via
  add_remaining_self_loops. As in PyG >= 2.3, ``improved`` only changes the loop fill when edge
  weights are given (without weights PyG adds the loops before defaulting weights to one).
* a ``torch_sparse.SparseTensor`` adj_t: self-loops via fill_diag (existing diagonal replaced).
* a torch.sparse COO/CSR adj_t: self-loops appended to every node (PyG's add_self_loops).
* a :class:`tessera.Graph` (rows = targets): like edge_index, but ``improved`` always fills 2;
  with ``cached=True`` the normalization is memoized on the graph itself (keyed by identity).

``cached=True`` with the PyG input types keeps the normalized graph of the first call
(PyG's transductive cache), transpose for backward included.
"""
import math
from typing import Optional

import torch
from torch import Tensor
from torch.nn import Parameter

from ..graph import Graph, is_sparse_adjacency, is_torch_sparse_tensor
from ._compile import eager_under_compile
from ._inputs import node_features
from ._linear import linear


@eager_under_compile  # torch.compile: the layer outside the graph (_compile.py)
class GCNConv(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, improved: bool = False, cached: bool = False,
                 add_self_loops: Optional[bool] = None, normalize: bool = True, bias: bool = True, **kwargs):
        super().__init__()
        aggr = kwargs.pop("aggr", "add")
        flow = kwargs.pop("flow", "source_to_target")
        kwargs.pop("node_dim", None)
        if aggr not in ("add", "sum") or flow != "source_to_target" or kwargs:
            raise NotImplementedError(
                f"tessera GCNConv supports aggr='add' and flow='source_to_target' only (got aggr={aggr!r}, "
                f"flow={flow!r}, other arguments {sorted(kwargs)})")
        if not isinstance(in_channels, int) or in_channels <= 0:
            raise ValueError(f"tessera GCNConv needs a positive in_channels (lazy -1 is not supported), "
                             f"got {in_channels}")
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError("GCNConv does not support adding self-loops to the graph when no on-the-fly "
                             "normalization is applied")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self._cached_graph: Optional[Graph] = None

        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyG's glorot: U(-a, a), a = sqrt(6 / (fan_in + fan_out)); bias zeros.
        a = math.sqrt(6.0 / (self.in_channels + self.out_channels))
        with torch.no_grad():
            self.lin.weight.uniform_(-a, a)
            if self.bias is not None:
                self.bias.zero_()
        self._cached_graph = None

    def _norm_dtype(self, x: Tensor) -> torch.dtype:
        return torch.float64 if x.dtype == torch.float64 else torch.float32

    def _graph(self, x: Tensor, edge_index, edge_weight: Optional[Tensor]) -> Graph:
        """The (normalized) graph to propagate over, following PyG's rules per input type."""
        node_features("GCNConv", x, self.in_channels, "x", self.lin.weight)
        n = x.size(0)
        loops = "remaining" if self.add_self_loops else "none"
        fill = 2.0 if self.improved else 1.0
        if isinstance(edge_index, Graph):
            g = edge_index if edge_weight is None else edge_index.with_values(edge_weight)
            if not self.normalize:
                return g
            return g.gcn_normalized(loops, fill, self._norm_dtype(x), memo=self.cached)
        if self.normalize and self.cached and self._cached_graph is not None:
            return self._cached_graph
        if is_sparse_adjacency(edge_index):
            g = Graph.from_sparse(edge_index)
            if self.add_self_loops:
                loops = "append" if is_torch_sparse_tensor(edge_index) else "replace"
        elif isinstance(edge_index, Tensor):
            g = Graph.from_edge_index(edge_index, edge_weight, num_nodes=n)
            if edge_weight is None:
                fill = 1.0  # PyG >= 2.3: loops added before weights default to ones
        else:
            raise TypeError(f"GCNConv: edge_index must be a [2, E] tensor, a sparse adjacency or a tessera.Graph, "
                            f"got {type(edge_index).__name__}")
        if not self.normalize:
            return g
        g = g.gcn_normalized(loops, fill, self._norm_dtype(x), memo=False)
        if self.cached:
            self._cached_graph = g
        return g

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None) -> Tensor:
        g = self._graph(x, edge_index, edge_weight)
        x = linear(self.lin, x)
        return g.spmm(x, bias=self.bias)  # + bias fused into the SpMM's single write of the output

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels})"
