"""tessera.Graph: a sparse graph for the tessera ops (Python mirror of tessera::pt::Graph).

Rows are targets: row i holds the in-neighbours of node i, so ``graph.spmm(x)`` aggregates
messages at their targets (PyG's ``source_to_target`` flow, edge_index = [sources; targets]).

A Graph carries an identity (``graph.id``, from ``tessera::new_graph_id``) that keys the core's
per-graph caches, and memoizes derived forms on itself: the transpose used by backward and
normalized versions. A cache keyed by "this graph" therefore lives exactly as long as the graph.
Treat a Graph as immutable.
"""
from typing import Optional

import torch
from torch import Tensor

from ._memo import TensorMemo, tensor_signature

_ops = torch.ops.tessera


def _check_edge_index(edge_index) -> None:
    """Shape and dtype of an edge_index, checked here before any op reads it, so bad input is
    reported by Python with the op's wording (RuntimeError) and never reaches C++ data access."""
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"edge_index_to_csr: edge_index must be a tensor, got {type(edge_index).__name__}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise RuntimeError("edge_index_to_csr: edge_index must have shape [2, E] (row 0 = sources, "
                           f"row 1 = targets), got {list(edge_index.shape)}")
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"edge_index_to_csr: edge_index must be int64 or int32, got {edge_index.dtype}")


def _check_index_range(edge_index: Tensor, num_src: int, num_dst: int) -> None:
    """Every source < num_src and every target < num_dst (one min/max pass; names the first bad edge)."""
    if num_src < 0 or num_dst < 0:
        raise RuntimeError(f"edge_index_to_csr: negative node count ({num_dst}, {num_src})")
    if edge_index.numel() == 0:
        return
    for row, bound, what in ((0, num_src, "source"), (1, num_dst, "target")):
        idx = edge_index[row]
        if int(idx.min()) >= 0 and int(idx.max()) < bound:
            continue
        k = int(torch.nonzero((idx < 0) | (idx >= bound))[0, 0])
        raise RuntimeError(f"edge_index_to_csr: edge {k}: {what} {int(idx[k])} out of range [0, {bound})")


class Graph:
    def __init__(self, rowptr: Tensor, col: Tensor, values: Optional[Tensor] = None,
                 num_cols: Optional[int] = None):
        if rowptr.dim() != 1 or rowptr.numel() < 1 or col.dim() != 1:
            raise ValueError("Graph: rowptr must be 1-D with rows + 1 entries and col 1-D")
        if values is not None and (values.dim() != 1 or values.numel() != col.numel()):
            raise ValueError(f"Graph: values must have one entry per edge ({col.numel()}), "
                             f"got shape {tuple(values.shape)}")
        self.rowptr = rowptr.contiguous()
        self.col = col.contiguous()
        self.values = values
        self.rows = rowptr.numel() - 1
        self.cols = self.rows if num_cols is None else int(num_cols)
        self.id = int(_ops.new_graph_id())
        self._transpose = None
        self._t_values = TensorMemo()  # values[perm] while the values are unchanged
        self._normalized = {}
        self._nonempty = None  # memo of nonempty_rows()

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_edge_index(cls, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                        num_nodes: Optional[int] = None, num_src: Optional[int] = None) -> "Graph":
        """edge_index [2, E] (row 0 sources, row 1 targets), optional weight per edge."""
        _check_edge_index(edge_index)
        if num_nodes is None:
            num_nodes = int(edge_index.max()) + 1 if edge_index.numel() else 0
        num_src = num_nodes if num_src is None else num_src
        _check_index_range(edge_index, int(num_src), int(num_nodes))
        rowptr, col, perm = _ops.edge_index_to_csr(edge_index, num_nodes, num_src, True)
        values = None
        if edge_weight is not None:
            if edge_weight.dim() != 1 or edge_weight.numel() != edge_index.size(1):
                raise ValueError(f"Graph: edge_weight must have one entry per edge ({edge_index.size(1)}), "
                                 f"got shape {tuple(edge_weight.shape)}")
            values = edge_weight.index_select(0, perm)
        return cls(rowptr, col, values, num_src)

    @classmethod
    def from_sparse(cls, adj_t) -> "Graph":
        """A transposed adjacency (rows = targets) as torch.sparse (COO or CSR) or
        torch_sparse.SparseTensor, as PyG passes them."""
        if is_torch_sparse_tensor(adj_t):
            if adj_t.layout == torch.sparse_coo:
                adj_t = adj_t.coalesce().to_sparse_csr()
            elif adj_t.layout != torch.sparse_csr:
                raise NotImplementedError(f"tessera: sparse layout {adj_t.layout} is not supported (use COO or CSR)")
            return cls(adj_t.crow_indices(), adj_t.col_indices(), adj_t.values(), adj_t.size(1))
        if is_sparse_tensor_like(adj_t):  # torch_sparse.SparseTensor
            rowptr, col, value = adj_t.csr()
            return cls(rowptr, col, value, adj_t.sparse_size(1))
        raise TypeError(f"tessera: expected a sparse adjacency, got {type(adj_t).__name__}")

    # ---- properties ---------------------------------------------------------------------
    @property
    def nnz(self) -> int:
        return self.col.numel()

    @property
    def device(self) -> torch.device:
        return self.rowptr.device

    def to(self, device) -> "Graph":
        v = None if self.values is None else self.values.to(device)
        return Graph(self.rowptr.to(device), self.col.to(device), v, self.cols)

    def with_values(self, values: Optional[Tensor]) -> "Graph":
        """The same structure with other values (a new graph: a new identity, no memos)."""
        return Graph(self.rowptr, self.col, values, self.cols)

    # ---- derived forms (memoized) -------------------------------------------------------
    def transpose(self):
        """(t_rowptr, t_col, perm, t_id): structure of A^T; transposed values = values[perm]."""
        if self._transpose is None:
            t_rowptr, t_col, perm = _ops.csr_transpose(self.rowptr, self.col, self.cols)
            self._transpose = (t_rowptr, t_col, perm, int(_ops.new_graph_id()))
        return self._transpose

    def nonempty_rows(self) -> Optional[Tensor]:
        """None when every row has an entry, else a float32 [rows, 1] mask, 1 on the rows that have
        one (memoized: the answer costs one device-to-host copy per graph)."""
        if self._nonempty is None:
            mask = self.rowptr[1:] != self.rowptr[:-1]
            self._nonempty = (bool(mask.all()), mask.view(-1, 1).float())
        return None if self._nonempty[0] else self._nonempty[1]

    def transposed_values(self) -> Optional[Tensor]:
        """The graph's own values in the transpose's entry order (values[perm]), memoized while the
        values are unchanged (their version counter); None for an unweighted graph. dX's SpMM reads
        them (gathered per backward they cost 3.1 of the CPU GCN's 93 fwd+bwd ms on R-MAT 2^16)."""
        if self.values is None:
            return None
        perm = self.transpose()[2]

        def make():
            with torch.no_grad():
                return self.values.index_select(0, perm)
        return self._t_values.get((self.values,), make)

    def gcn_normalized(self, self_loops: str = "remaining", fill: float = 1.0,
                       dtype: torch.dtype = torch.float32, memo: bool = True) -> "Graph":
        """PyG's gcn_norm. self_loops: remaining (edge_index inputs), replace (torch_sparse
        fill_diag), append (torch.sparse inputs) or none. memo keeps the result on this graph
        unless the values require grad (then it carries autograd history)."""
        memo = memo and not (self.values is not None and self.values.requires_grad)
        key = (self_loops, float(fill), dtype)
        if memo and key in self._normalized:
            return self._normalized[key]
        rowptr, col, w = _ops.gcn_norm(self.rowptr, self.col, self.values, self.cols, self_loops, float(fill), dtype)
        out = Graph(rowptr, col, w, self.cols)
        if memo:
            self._normalized[key] = out
        return out

    # ---- compute ------------------------------------------------------------------------
    def spmm(self, x: Tensor, values: Optional[Tensor] = None, bias: Optional[Tensor] = None) -> Tensor:
        return spmm(self, x, values, bias)

    def __repr__(self):
        w = "weighted" if self.values is not None else "unweighted"
        return f"tessera.Graph({self.rows} x {self.cols}, nnz={self.nnz}, {w}, device={self.device}, id={self.id})"


def spmm(graph: Graph, x: Tensor, values: Optional[Tensor] = None, bias: Optional[Tensor] = None) -> Tensor:
    """Y = A X (+ bias), autograd-aware (dX through the memoized transpose, d(values) via SDDMM,
    d(bias) = column sums of dY). `values` overrides the graph's own values; `bias` [F] is added
    to every row inside the SpMM (one write of Y instead of a second pass)."""
    if x.dim() != 2 or x.size(0) != graph.cols:
        raise ValueError(f"spmm: x must be [{graph.cols}, F] for this graph, got {tuple(x.shape)}")
    v = graph.values if values is None else values
    if not (torch.is_grad_enabled() and x.requires_grad):  # the transpose serves dX only
        return _ops.spmm(graph.rowptr, graph.col, v, x, None, None, None, graph.id, 0, bias)
    t_rowptr, t_col, perm, t_id = graph.transpose()
    t_values = graph.transposed_values() if values is None else None  # the memo serves the graph's own values
    return _ops.spmm(graph.rowptr, graph.col, v, x, t_rowptr, t_col, perm, graph.id, t_id, bias, t_values)


def is_torch_sparse_tensor(t) -> bool:
    """A torch.sparse tensor of any layout (Graph.from_sparse reads COO and CSR and names the others)."""
    return isinstance(t, Tensor) and t.layout != torch.strided


def is_sparse_tensor_like(t) -> bool:
    """torch_sparse.SparseTensor without importing torch_sparse (a Python object, never a Tensor)."""
    return not isinstance(t, Tensor) and hasattr(t, "csr") and hasattr(t, "sparse_size") and hasattr(t, "storage")


def is_sparse_adjacency(t) -> bool:
    """An adjacency PyG's layers take in place of edge_index: torch.sparse or torch_sparse.SparseTensor."""
    return is_torch_sparse_tensor(t) or is_sparse_tensor_like(t)


def sparse_with_values(like: Tensor, targets: Tensor, sources: Tensor, values: Tensor, size) -> Tensor:
    """A torch.sparse tensor in like's layout (COO or CSR), rows = targets, of the given entries and
    their values ([nnz, ...]: a hybrid tensor of size size + values.shape[1:]), coalesced: sorted by
    (target, source), as PyG's set_sparse_value returns attention weights for a sparse input."""
    full = tuple(size) + tuple(values.shape[1:])
    coo = torch.sparse_coo_tensor(torch.stack([targets.long(), sources.long()]), values, full).coalesce()
    if like.layout == torch.sparse_coo:
        return coo
    rows, cols = coo.indices()
    crow = torch.zeros(size[0] + 1, dtype=torch.long, device=rows.device)
    crow[1:] = torch.bincount(rows, minlength=size[0]).cumsum(0)
    return torch.sparse_csr_tensor(crow, cols, coo.values(), full)


def check_graph_size(layer: str, g: Graph, num_dst: int, num_src: int) -> Graph:
    """g, if it is num_dst x num_src (targets x sources) as the layer's x says; else a ValueError."""
    if g.rows != num_dst or g.cols != num_src:
        raise ValueError(f"{layer}: the adjacency is {g.rows} x {g.cols} (targets x sources) but x gives "
                         f"{num_dst} targets and {num_src} sources")
    return g


class GraphCache:
    """A layer's graph built from its last edge_index (and its transpose, which tessera.Graph keeps
    once built), reused while the very same tensor comes back unmodified (same version counter and
    storage, _memo.tensor_signature) with the same sizes, or the very same tessera.Graph (same id, its identity, as its own memos use) or
    torch_sparse.SparseTensor (immutable: identity alone; the layers read its structure, never
    its values). PyG rebuilds these every call; a training loop passes the same edge_index every
    step. Holding the input keeps its storage alive, so identity cannot be confused with a new one."""

    def __init__(self):
        self._key = None
        self._graph = None

    def get(self, edge_index, sizes: tuple, build):
        if isinstance(edge_index, Graph):
            version = edge_index.id
        elif not isinstance(edge_index, Tensor):
            version = 0
        else:
            version = tensor_signature((edge_index,))
            if version is None:  # inference-mode tensors carry no version counter: never cache
                return build()
        key = self._key
        if key is not None and key[0] is edge_index and key[1] == version and key[2] == sizes:
            return self._graph
        self._graph = build()
        self._key = (edge_index, version, sizes)
        return self._graph
