"""PyG's GCNConv semantics in plain torch (no torch_geometric needed): the oracle for the tests and
the CPU benchmark's peer. Follows torch_geometric 2.x: gcn_norm (add_remaining_self_loops, then
ones for missing weights, weighted in-degree at the target, D^-1/2 A D^-1/2 with 1/0 -> 0), then
message = w * x_j gathered with index_select and summed at the target with index_add_."""
import math
from typing import Optional

import torch
from torch import Tensor


def add_remaining_self_loops(edge_index: Tensor, edge_weight: Optional[Tensor], fill: float, n: int):
    mask = edge_index[0] != edge_index[1]
    loops = torch.arange(n, device=edge_index.device).view(1, -1).repeat(2, 1)
    if edge_weight is not None:
        loop_w = edge_weight.new_full((n,), fill)
        inv = ~mask
        loop_w[edge_index[0][inv]] = edge_weight[inv]
        edge_weight = torch.cat([edge_weight[mask], loop_w])
    return torch.cat([edge_index[:, mask], loops], dim=1), edge_weight


def gcn_norm(edge_index: Tensor, edge_weight: Optional[Tensor], n: int, improved: bool = False,
             add_self_loops: bool = True, dtype=torch.float32):
    fill = 2.0 if improved else 1.0
    if add_self_loops:
        edge_index, edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill, n)
    if edge_weight is None:
        edge_weight = torch.ones(edge_index.size(1), dtype=dtype, device=edge_index.device)
    row, col = edge_index[0], edge_index[1]
    deg = torch.zeros(n, dtype=edge_weight.dtype, device=edge_weight.device).index_add(0, col, edge_weight)
    dis = deg.pow(-0.5)
    dis = dis.masked_fill(dis == float("inf"), 0)
    return edge_index, dis[row] * edge_weight * dis[col]


def propagate(x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor]) -> Tensor:
    msg = x.index_select(0, edge_index[0])
    if edge_weight is not None:
        msg = msg * edge_weight.view(-1, 1).to(x.dtype)
    return torch.zeros_like(x).index_add_(0, edge_index[1], msg)


class RefGCNConv(torch.nn.Module):
    """PyG 2.x GCNConv semantics and parameter layout (lin.weight, bias) in plain torch."""

    def __init__(self, in_channels, out_channels, improved=False, cached=False, add_self_loops=None,
                 normalize=True, bias=True):
        super().__init__()
        self.improved, self.cached, self.normalize = improved, cached, normalize
        self.add_self_loops = normalize if add_self_loops is None else add_self_loops
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_channels)) if bias else None
        a = math.sqrt(6.0 / (in_channels + out_channels))
        with torch.no_grad():
            self.lin.weight.uniform_(-a, a)
        self._cache = None

    def forward(self, x, edge_index, edge_weight=None):
        if self.normalize:
            if self._cache is None:
                edge_index, edge_weight = gcn_norm(edge_index, edge_weight, x.size(0), self.improved,
                                                   self.add_self_loops, x.dtype)
                if self.cached:
                    self._cache = (edge_index, edge_weight)
            else:
                edge_index, edge_weight = self._cache
        out = propagate(self.lin(x), edge_index, edge_weight)
        return out if self.bias is None else out + self.bias


def random_graph(n: int, e: int, seed: int, self_loops: bool = True, isolated: int = 3):
    """Random directed multigraph with duplicates, some self-loops and isolated nodes."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n - isolated, (e,), generator=g)
    dst = torch.randint(0, n - isolated, (e,), generator=g)
    if e >= 8:
        src[: e // 8] = src[e // 8: 2 * (e // 8)]  # duplicate edges
        dst[: e // 8] = dst[e // 8: 2 * (e // 8)]
    # Exactly three self-loops (at distinct nodes): with duplicate loops PyG's forward keeps one of
    # them but its index_put backward credits all, so gradients would not be comparable.
    m = n - isolated
    dst = torch.where(src == dst, (dst + 1) % m, dst)
    if self_loops and e >= 4:
        src[-3:] = torch.tensor([1, 2, 3]) % m
        dst[-3:] = src[-3:]
    return torch.stack([src, dst])


class SparseTensorStandIn:
    """What tessera reads of a torch_sparse.SparseTensor (torch_sparse is installed on neither
    machine): csr() and sparse_size(), over a torch CSR tensor."""
    def __init__(self, adj_csr: Tensor):
        self.adj, self.storage = adj_csr, None

    def csr(self):
        return self.adj.crow_indices(), self.adj.col_indices(), self.adj.values()

    def sparse_size(self, dim: int) -> int:
        return self.adj.size(dim)


def sparse_adjacency(ei: Tensor, n_src: int, n_dst: int, layout: str) -> Tensor:
    """adj_t (rows = targets) of the distinct edges of ei, as PyG users pass it (T.ToSparseTensor,
    to_torch_csc_tensor(edge_index).t()): COO or CSR, values 1."""
    adj = torch.sparse_coo_tensor(ei.flip(0), torch.ones(ei.size(1), dtype=torch.float64), (n_dst, n_src))
    adj = adj.coalesce()
    adj = torch.sparse_coo_tensor(adj.indices(), torch.ones_like(adj.values()), adj.shape).coalesce()
    return adj if layout == "coo" else adj.to_sparse_csr()
