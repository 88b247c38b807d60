"""PyG's GATv2Conv / TransformerConv semantics in plain torch (no torch_geometric needed): the
oracle of test_attention.py and the CPU benchmark's peer. Per-edge tensors built with
index_select, softmax over target groups with scatter_reduce (amax) and index_add_, as
torch_geometric.utils.softmax does (denominator + 1e-16)."""
import math

import torch
import torch.nn.functional as F
from torch import Tensor


def remove_and_add_self_loops(edge_index: Tensor, n: int) -> Tensor:
    keep = edge_index[0] != edge_index[1]
    loops = torch.arange(n, device=edge_index.device, dtype=edge_index.dtype)
    return torch.cat([edge_index[:, keep], torch.stack([loops, loops])], dim=1)


def segment_softmax(src: Tensor, index: Tensor, n: int) -> Tensor:
    """src [E, H] normalized over the edges sharing index (the target)."""
    idx = index.view(-1, 1).expand_as(src)
    m = torch.full((n, src.size(1)), float("-inf"), dtype=src.dtype, device=src.device)
    m = m.scatter_reduce(0, idx, src, reduce="amax", include_self=True)
    e = (src - m.index_select(0, index)).exp()
    s = torch.zeros((n, src.size(1)), dtype=src.dtype, device=src.device).index_add_(0, index, e)
    return e / (s.index_select(0, index) + 1e-16)


def gatv2_attention(x_l: Tensor, x_r: Tensor, att: Tensor, edge_index: Tensor, slope: float):
    """x_l [Ns, H, C], x_r [Nd, H, C], att [1, H, C] -> (out [Nd, H, C], alpha [E, H])."""
    src, dst = edge_index[0], edge_index[1]
    xj = x_l.index_select(0, src)
    z = F.leaky_relu(xj + x_r.index_select(0, dst), slope)
    alpha = segment_softmax((z * att).sum(-1), dst, x_r.size(0))
    out = torch.zeros_like(x_r).index_add_(0, dst, xj * alpha.unsqueeze(-1))
    return out, alpha


def transformer_attention(q: Tensor, k: Tensor, v: Tensor, edge_index: Tensor):
    src, dst = edge_index[0], edge_index[1]
    logits = (q.index_select(0, dst) * k.index_select(0, src)).sum(-1) / math.sqrt(q.size(-1))
    alpha = segment_softmax(logits, dst, q.size(0))
    out = torch.zeros_like(q).index_add_(0, dst, v.index_select(0, src) * alpha.unsqueeze(-1))
    return out, alpha


def gatv2_conv(mod, x, edge_index: Tensor):
    """PyG GATv2Conv.forward (no dropout, no edge features) with mod's parameters."""
    H, C = mod.heads, mod.out_channels
    x_src, x_dst = (x, x) if isinstance(x, Tensor) else x
    x_l = mod.lin_l(x_src).view(-1, H, C)
    x_r = x_l if (mod.share_weights and isinstance(x, Tensor)) else mod.lin_r(x_dst).view(-1, H, C)
    if mod.add_self_loops:
        edge_index = remove_and_add_self_loops(edge_index, min(x_l.size(0), x_r.size(0)))
    out, alpha = gatv2_attention(x_l, x_r, mod.att, edge_index, mod.negative_slope)
    out = out.reshape(-1, H * C) if mod.concat else out.mean(dim=1)
    if mod.res is not None:
        out = out + mod.res(x_dst)
    if mod.bias is not None:
        out = out + mod.bias
    return out, edge_index, alpha


def transformer_conv(mod, x, edge_index: Tensor):
    H, C = mod.heads, mod.out_channels
    x = (x, x) if isinstance(x, Tensor) else x
    q = mod.lin_query(x[1]).view(-1, H, C)
    k = mod.lin_key(x[0]).view(-1, H, C)
    v = mod.lin_value(x[0]).view(-1, H, C)
    out, alpha = transformer_attention(q, k, v, edge_index)
    out = out.reshape(-1, H * C) if mod.concat else out.mean(dim=1)
    if mod.root_weight:
        x_r = mod.lin_skip(x[1])
        if mod.lin_beta is not None:
            b = mod.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
            out = b * x_r + (1 - b) * out
        else:
            out = out + x_r
    return out, edge_index, alpha


def self_loops_with_mean_attr(edge_index: Tensor, edge_attr: Tensor, n: int):
    """remove_self_loops + add_self_loops(fill_value='mean'): loop i carries the mean of the features of
    i's remaining in-edges (zeros when it has none)."""
    keep = edge_index[0] != edge_index[1]
    edge_index, edge_attr = edge_index[:, keep], edge_attr[keep]
    dst = edge_index[1]
    total = edge_attr.new_zeros((n, edge_attr.size(1))).index_add_(0, dst, edge_attr)
    count = edge_attr.new_zeros(n).index_add_(0, dst, torch.ones_like(dst, dtype=edge_attr.dtype))
    loop_attr = total / count.clamp(min=1).unsqueeze(1)
    loops = torch.arange(n, dtype=edge_index.dtype, device=edge_index.device)
    return torch.cat([edge_index, torch.stack([loops, loops])], 1), torch.cat([edge_attr, loop_attr], 0)


def gatv2_conv_edge(mod, x, edge_index: Tensor, edge_attr: Tensor):
    """PyG GATv2Conv.forward with edge features (fill_value='mean'), no dropout."""
    H, C = mod.heads, mod.out_channels
    x_src, x_dst = (x, x) if isinstance(x, Tensor) else x
    x_l = mod.lin_l(x_src).view(-1, H, C)
    x_r = x_l if (mod.share_weights and isinstance(x, Tensor)) else mod.lin_r(x_dst).view(-1, H, C)
    if edge_attr.dim() == 1:
        edge_attr = edge_attr.view(-1, 1)
    if mod.add_self_loops:
        edge_index, edge_attr = self_loops_with_mean_attr(edge_index, edge_attr, min(x_l.size(0), x_r.size(0)))
    src, dst = edge_index[0], edge_index[1]
    xj = x_l.index_select(0, src)
    z = F.leaky_relu(xj + x_r.index_select(0, dst) + mod.lin_edge(edge_attr).view(-1, H, C), mod.negative_slope)
    alpha = segment_softmax((z * mod.att).sum(-1), dst, x_r.size(0))
    out = torch.zeros_like(x_r).index_add_(0, dst, xj * alpha.unsqueeze(-1))
    out = out.reshape(-1, H * C) if mod.concat else out.mean(dim=1)
    if mod.res is not None:
        out = out + mod.res(x_dst)
    if mod.bias is not None:
        out = out + mod.bias
    return out, edge_index, alpha


def transformer_conv_edge(mod, x, edge_index: Tensor, edge_attr: Tensor):
    """PyG TransformerConv.forward with edge features: lin_edge(e_ij) added to k_j and to v_j."""
    H, C = mod.heads, mod.out_channels
    x = (x, x) if isinstance(x, Tensor) else x
    q = mod.lin_query(x[1]).view(-1, H, C)
    k = mod.lin_key(x[0]).view(-1, H, C)
    v = mod.lin_value(x[0]).view(-1, H, C)
    e = mod.lin_edge(edge_attr).view(-1, H, C)
    src, dst = edge_index[0], edge_index[1]
    logits = (q.index_select(0, dst) * (k.index_select(0, src) + e)).sum(-1) / math.sqrt(C)
    alpha = segment_softmax(logits, dst, q.size(0))
    out = torch.zeros_like(q).index_add_(0, dst, (v.index_select(0, src) + e) * alpha.unsqueeze(-1))
    out = out.reshape(-1, H * C) if mod.concat else out.mean(dim=1)
    if mod.root_weight:
        x_r = mod.lin_skip(x[1])
        if mod.lin_beta is not None:
            b = mod.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
            out = b * x_r + (1 - b) * out
        else:
            out = out + x_r
    return out, edge_index, alpha
