"""Marginalized graph kernels (GraphDot convention), scikit-learn style.

    from tessera.kernels import MarginalizedGraphKernel, LabeledGraph
    g = LabeledGraph.from_edges(3, [(0, 1), (1, 2)], node_labels=[6, 6, 8], edge_labels=[1, 2])
    mgk = MarginalizedGraphKernel(node_kernel="delta:0.5", edge_kernel="delta:0.5", q=0.05)
    K = mgk([g, g2, g3])            # Gram matrix (numpy float64), only i <= j solved
    K, dK = mgk(graphs, eval_gradient=True)   # dK: [n, n, num_hyperparameters] like scikit-learn
    d = mgk.diag(graphs)
    mols = from_smiles(["CCO", "c1ccccc1"])   # molecules through RDKit (labels: see from_smiles)

Base kernels are given as text (the same syntax as ``tessera kernel --node-kernel``):
``constant:c``, ``delta:h`` (Kronecker delta on the label; ``delta:h@attributes``), ``sqexp:l``
(square exponential on the attribute vector; ``sqexp:l@label``), ``product(k1,k2,...)`` and
``mean(k1,k2,...)``. Or use the helpers Constant / KroneckerDelta / SquareExponential /
TensorProduct / Additive below, which build that text.

The solve is done by the C++ core (torch.ops.tessera.graph_kernel_*): PCG on the product graph,
with the product matrix never stored, on the CPU (OpenMP) or a CUDA device.
"""
from typing import List, Optional, Sequence, Tuple
import warnings

import numpy as np
import torch

_ops = torch.ops.tessera


# ---- base kernels as text ----------------------------------------------------------------------
def Constant(c: float) -> str:
    return f"constant:{float(c)!r}"


def KroneckerDelta(h: float, feature: str = "label") -> str:
    return f"delta:{float(h)!r}" + ("" if feature == "label" else f"@{feature}")


def SquareExponential(length_scale: float, feature: str = "attributes") -> str:
    return f"sqexp:{float(length_scale)!r}" + ("" if feature == "attributes" else f"@{feature}")


def TensorProduct(*parts: str) -> str:
    return "product(" + ",".join(parts) + ")"


def Additive(*parts: str) -> str:
    return "mean(" + ",".join(parts) + ")"


# ---- graphs --------------------------------------------------------------------------------------
class LabeledGraph:
    """An undirected labeled graph: symmetric CSR (both directions stored, a self loop once),
    optional weights, integer node/edge labels and a float node-attribute matrix."""

    def __init__(self, rowptr, col, weight=None, node_labels=None, edge_labels=None, node_attrs=None):
        self.rowptr = torch.as_tensor(np.asarray(rowptr), dtype=torch.int64)
        self.col = torch.as_tensor(np.asarray(col), dtype=torch.int64)
        self.n = self.rowptr.numel() - 1
        if self.n < 0 or self.rowptr.dim() != 1 or self.col.dim() != 1:
            raise ValueError("LabeledGraph: rowptr must be 1-D with n+1 entries, col 1-D")
        e = self.col.numel()
        self.weight = None if weight is None else torch.as_tensor(np.asarray(weight), dtype=torch.float64)
        self.node_labels = None if node_labels is None else torch.as_tensor(np.asarray(node_labels), dtype=torch.int64)
        self.edge_labels = None if edge_labels is None else torch.as_tensor(np.asarray(edge_labels), dtype=torch.int64)
        if node_attrs is None:
            self.node_attrs = torch.zeros(self.n, 0, dtype=torch.float32)
        else:
            a = torch.as_tensor(np.asarray(node_attrs), dtype=torch.float32)
            self.node_attrs = a.reshape(self.n, -1)
        for name, t, want in (("weight", self.weight, e), ("edge_labels", self.edge_labels, e),
                              ("node_labels", self.node_labels, self.n)):
            if t is not None and t.numel() != want:
                raise ValueError(f"LabeledGraph: {name} must have {want} entries, got {t.numel()}")

    @classmethod
    def from_edges(cls, n: int, edges: Sequence[Tuple[int, int]], weights=None, node_labels=None,
                   edge_labels=None, node_attrs=None) -> "LabeledGraph":
        """Undirected edges (i, j), each listed once; weights / edge labels per listed edge."""
        rows = [[] for _ in range(n)]
        for k, (i, j) in enumerate(edges):
            if not (0 <= i < n and 0 <= j < n):
                raise ValueError(f"LabeledGraph: edge {k} ({i}, {j}) outside 0..{n - 1}")
            w = 1.0 if weights is None else float(weights[k])
            lab = 0 if edge_labels is None else int(edge_labels[k])
            rows[i].append((j, w, lab))
            if i != j:
                rows[j].append((i, w, lab))
        rowptr, col, wt, el = [0], [], [], []
        for r in rows:
            for c, w, lab in sorted(r):
                col.append(c)
                wt.append(w)
                el.append(lab)
            rowptr.append(len(col))
        return cls(rowptr, col, None if weights is None else wt, node_labels,
                   None if edge_labels is None else el, node_attrs)

    @classmethod
    def from_networkx(cls, g, node_label: Optional[str] = None, edge_label: Optional[str] = None,
                      weight: Optional[str] = None) -> "LabeledGraph":
        nodes = list(g.nodes())
        index = {v: i for i, v in enumerate(nodes)}
        edges = [(index[a], index[b]) for a, b in g.edges()]
        data = [d for _, _, d in g.edges(data=True)]
        return cls.from_edges(
            len(nodes), edges,
            weights=None if weight is None else [d[weight] for d in data],
            node_labels=None if node_label is None else [g.nodes[v][node_label] for v in nodes],
            edge_labels=None if edge_label is None else [d[edge_label] for d in data])


def from_smiles(smiles: Sequence[str]) -> List[LabeledGraph]:
    """Molecules from SMILES strings (read by RDKit inside the C++ core), one LabeledGraph each.

    Heavy atoms are nodes (hydrogens implicit), bonds are edges (both directions, unweighted).
    Node label = Z + 1000*aromatic + 10000*formal_charge; edge label = bond code (1 single,
    2 double, 3 triple, 4 aromatic, 5 quadruple, 6 dative, 7 other) + 10*conjugated; node_attrs
    = [formal charge, total H, aromatic, in ring]. So ``delta:h`` base kernels compare element,
    charge and aromaticity, and bond order and conjugation. An invalid SMILES, or a tessera built
    without RDKit (librdkit-dev), raises RuntimeError naming the input.
    """
    if isinstance(smiles, str):
        raise TypeError("from_smiles: pass a list of SMILES strings, e.g. from_smiles(['CCO'])")
    smiles = [str(s) for s in smiles]
    if not smiles:
        return []
    gptr, rowptr, col, _, nl, el, attrs = _ops.graph_from_smiles(smiles)
    out = []
    for g in range(len(smiles)):
        n0, n1 = int(gptr[g]), int(gptr[g + 1])
        e0, e1 = int(rowptr[n0]), int(rowptr[n1])
        out.append(LabeledGraph(rowptr[n0:n1 + 1] - e0, col[e0:e1], None, nl[n0:n1], el[e0:e1], attrs[n0:n1]))
    return out


def _pack(graphs: Sequence[LabeledGraph]) -> List[torch.Tensor]:
    """Concatenates graphs into the 7-tensor batch the ops take (see graph_kernel_op.cpp)."""
    if len(graphs) == 0:
        raise ValueError("MarginalizedGraphKernel: empty list of graphs")
    graphs = [g if isinstance(g, LabeledGraph) else _convert(g) for g in graphs]
    have_w = [g.weight is not None for g in graphs]
    have_nl = [g.node_labels is not None for g in graphs]
    have_el = [g.edge_labels is not None for g in graphs]
    dims = {g.node_attrs.shape[1] for g in graphs}
    if len(dims) != 1:
        raise ValueError(f"MarginalizedGraphKernel: graphs disagree on the node-attribute dimension {sorted(dims)}")
    if len(set(have_nl)) != 1 or len(set(have_el)) != 1:
        raise ValueError("MarginalizedGraphKernel: either all graphs carry node (edge) labels or none")
    sizes = torch.tensor([0] + [g.n for g in graphs], dtype=torch.int64)
    graph_ptr = torch.cumsum(sizes, 0)
    nnz = [g.col.numel() for g in graphs]
    offsets = np.cumsum([0] + nnz)
    rowptr = torch.cat([torch.zeros(1, dtype=torch.int64)] +
                       [g.rowptr[1:] + int(o) for g, o in zip(graphs, offsets[:-1])])
    col = torch.cat([g.col for g in graphs])
    weight = (torch.cat([g.weight if g.weight is not None else torch.ones(g.col.numel(), dtype=torch.float64)
                         for g in graphs]) if any(have_w) else torch.empty(0, dtype=torch.float64))
    nl = torch.cat([g.node_labels for g in graphs]) if have_nl[0] else torch.empty(0, dtype=torch.int64)
    el = torch.cat([g.edge_labels for g in graphs]) if have_el[0] else torch.empty(0, dtype=torch.int64)
    attrs = torch.cat([g.node_attrs for g in graphs])
    return [graph_ptr, rowptr, col, weight, nl, el, attrs]


def _convert(g) -> LabeledGraph:
    try:
        import networkx  # noqa: F401
        return LabeledGraph.from_networkx(g)
    except Exception as e:  # pragma: no cover - message only
        raise TypeError(f"MarginalizedGraphKernel: cannot use a {type(g).__name__} as a graph "
                        "(pass tessera.kernels.LabeledGraph)") from e


class MarginalizedGraphKernel:
    """K(G, G') = sum p p' x, (D V^-1 - W) x = D 1 on the product graph (GraphDot convention).

    node_kernel / edge_kernel: base-kernel text (see module docstring); q: stopping probability;
    lmin=1 subtracts the single-vertex term; normalize: K / sqrt(K(G,G) K(G',G')); dtype
    'float64' or 'float32' solver arithmetic; device 'cpu' or 'cuda[:i]'; tol 0 = default;
    as_tensor: return torch tensors instead of numpy arrays.
    """

    def __init__(self, node_kernel: str = "constant:1.0", edge_kernel: str = "constant:1.0", q: float = 0.05,
                 lmin: int = 0, normalize: bool = False, dtype: str = "float64", device: str = "cpu",
                 tol: float = 0.0, max_iter: int = 4000, as_tensor: bool = False):
        self.node_kernel = node_kernel
        self.edge_kernel = edge_kernel
        self.q = float(q)
        self.lmin = int(lmin)
        self.normalize = bool(normalize)
        self.dtype = dtype
        self.device = str(device)
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.as_tensor = as_tensor
        self.last_stats = None
        self.last_iterations = None

    # scikit-learn conventions
    def get_params(self, deep: bool = True) -> dict:
        return dict(node_kernel=self.node_kernel, edge_kernel=self.edge_kernel, q=self.q, lmin=self.lmin,
                    normalize=self.normalize, dtype=self.dtype, device=self.device, tol=self.tol,
                    max_iter=self.max_iter, as_tensor=self.as_tensor)

    def set_params(self, **params) -> "MarginalizedGraphKernel":
        for k, v in params.items():
            if k not in self.get_params():
                raise ValueError(f"MarginalizedGraphKernel: unknown parameter {k!r}")
            setattr(self, k, v)
        return self

    @property
    def hyperparameter_names(self) -> List[str]:
        """Names of the gradient entries: node-kernel terms, edge-kernel terms, then 'q'."""
        return list(_ops.graph_kernel_hyperparameter_names(self.node_kernel, self.edge_kernel))

    def _out(self, t: torch.Tensor):
        return t if self.as_tensor else t.numpy()

    def __call__(self, X: Sequence[LabeledGraph], Y: Optional[Sequence[LabeledGraph]] = None,
                 eval_gradient: bool = False):
        """Gram matrix K[i, j] = k(X[i], Y[j]) (Y defaults to X: symmetric, i <= j solved).
        With eval_gradient, also dK of shape [len(X), len(Y), len(hyperparameter_names)] (computed
        on the CPU whatever `device` says: the CUDA backend has no adjoint solve)."""
        x = _pack(X)
        y = [] if Y is None else _pack(Y)
        # The adjoint (gradient) solve exists on the CPU backend only: gradients are computed there.
        device = "cpu" if eval_gradient else self.device
        K, grad, iters, stats = _ops.graph_kernel_gram(
            x, y, self.node_kernel, self.edge_kernel, self.q, self.lmin, self.normalize, self.dtype,
            device, self.tol, self.max_iter, bool(eval_gradient))
        self.last_iterations = iters
        names = ("pairs", "converged", "max_iterations", "mean_iterations", "max_residual", "seconds",
                 "matvec_flops")
        self.last_stats = dict(zip(names, stats.tolist()))
        failed = int(self.last_stats["pairs"] - self.last_stats["converged"])
        if failed:
            bad = (iters >= self.max_iter).nonzero().tolist()[:10]
            warnings.warn(f"MarginalizedGraphKernel: {failed} pair(s) did not converge within max_iter="
                          f"{self.max_iter} (e.g. {bad}); their values are not reliable", RuntimeWarning)
        if not eval_gradient:
            return self._out(K)
        return self._out(K), self._out(grad.permute(1, 2, 0).contiguous())

    def diag(self, X: Sequence[LabeledGraph]):
        """K(G, G) for every graph (all ones when normalize=True)."""
        d = _ops.graph_kernel_diag(_pack(X), self.node_kernel, self.edge_kernel, self.q, self.lmin,
                                   self.normalize, self.dtype, self.device, self.tol, self.max_iter)
        return self._out(d)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"MarginalizedGraphKernel({args})"


__all__ = ["MarginalizedGraphKernel", "LabeledGraph", "from_smiles", "Constant", "KroneckerDelta", "SquareExponential",
           "TensorProduct", "Additive"]
