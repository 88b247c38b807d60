"""Checks of a layer's inputs that name the layer and what it expected. Without them a wrong x
fails later inside a projection ("mat1 and mat2 shapes cannot be multiplied (5x7 and 4x6)") or a
wrong edge_index inside the self-loop concatenation, with messages about torch's own operands."""
from typing import Optional, Tuple, Union

import torch
from torch import Tensor


def widths(in_channels: Union[int, Tuple[int, int]]) -> Tuple[int, int]:
    """(source, target) input widths from PyG's in_channels (an int, or a pair for bipartite input)."""
    return (in_channels, in_channels) if isinstance(in_channels, int) else tuple(in_channels)


def layer_inputs(layer: str, in_channels: Union[int, Tuple[int, int]], kwargs: dict) -> Tuple[int, int]:
    """(source, target) input widths of an attention layer from PyG's in_channels. The keywords
    PyG's MessagePassing takes that these layers do not need (aggr, node_dim: both sum at the
    target, nodes in dimension 0) are dropped; any other is an error, as is a lazy width (-1)."""
    kwargs.pop("aggr", None)
    kwargs.pop("node_dim", None)
    if kwargs:
        raise NotImplementedError(f"tessera {layer}: unsupported arguments {sorted(kwargs)}")
    src, dst = widths(in_channels)
    if src <= 0 or dst <= 0:
        raise ValueError(f"tessera {layer} needs positive in_channels (lazy -1 is not supported), got {in_channels}")
    return src, dst


def node_features(layer: str, x, in_channels: int, what: str = "x", weight: Optional[Tensor] = None) -> Tensor:
    """x as a layer's node features: a 2-D [nodes, in_channels] floating tensor, on the device of
    the layer's weight (where given) and of its dtype unless autocast is on (which casts both)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{layer}: {what} must be a tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{layer}: {what} must be a 2-D [nodes, features] tensor, got shape {tuple(x.shape)}")
    if x.size(1) != in_channels:
        raise ValueError(f"{layer}: {what} has {x.size(1)} features per node, but the layer was built for "
                         f"in_channels = {in_channels}")
    if not x.is_floating_point():
        raise TypeError(f"{layer}: {what} must be a floating-point tensor, got {x.dtype} "
                        f"(convert it with {what.split(' ')[0]}.float())")
    if weight is not None:
        if x.device != weight.device:
            raise ValueError(f"{layer}: {what} is on {x.device} but the layer's parameters are on "
                             f"{weight.device} (move one with .to())")
        if x.dtype != weight.dtype and not autocast_on(x):
            raise TypeError(f"{layer}: {what} is {x.dtype} but the layer's parameters are {weight.dtype} "
                            f"(convert one with .to(dtype))")
    return x


def _autocast_by_device() -> bool:
    """Whether torch.is_autocast_enabled takes a device type (torch 2.4 on)."""
    try:
        torch.is_autocast_enabled("cpu")
        return True
    except TypeError:
        return False


_AUTOCAST_BY_DEVICE = _autocast_by_device()


def autocast_on(x: Tensor) -> bool:
    """Whether autocast is on for x's device type. There it casts x and the weights alike, so x may
    be of another floating type than the parameters, and the layers leave their projections to
    torch's linear, which casts them as the user asked (_linear)."""
    if _AUTOCAST_BY_DEVICE:
        return torch.is_autocast_enabled(x.device.type)
    # torch 1.13 (Debian's): no argument, CUDA's state; the CPU has its own call
    return torch.is_autocast_enabled() if x.is_cuda else x.is_cpu and torch.is_autocast_cpu_enabled()


def node_feature_pair(layer: str, x, in_channels: Union[int, Tuple[int, int]],
                      weight: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(x_src, x_dst) of an attention layer: x, or a pair (x_src, x_dst), each checked."""
    src, dst = widths(in_channels)
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError(f"{layer}: x must be a tensor or a pair (x_src, x_dst), got a tuple of {len(x)}")
        return (node_features(layer, x[0], src, "x[0] (sources)", weight),
                node_features(layer, x[1], dst, "x[1] (targets)", weight))
    node_features(layer, x, src, "x", weight)
    if dst != src:
        raise ValueError(f"{layer}: built for bipartite input (in_channels = {in_channels}): pass x = (x_src, x_dst)")
    return x, x


def edge_features(layer: str, edge_attr, edge_index, lin_edge: Optional[torch.nn.Linear]) -> Tensor:
    """edge_attr of an attention layer as [E, edge_dim]: a floating tensor (a [E] one is one feature
    per edge) with a row per edge of edge_index (which must then be a [2, E] tensor) and the layer's
    edge_dim columns, on lin_edge's device. Without these the error came from inside the kernels'
    checks ("attention: edge_weight has 3 columns", "spmm: x must be float32 ...")."""
    if lin_edge is None:
        raise ValueError(f"{layer}: edge_attr given but the layer was built without edge_dim")
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"tessera {layer}: edge_attr needs edge_index as a [2, E] tensor, "
                        f"got {type(edge_index).__name__}")
    if not isinstance(edge_attr, Tensor):
        raise TypeError(f"{layer}: edge_attr must be a tensor, got {type(edge_attr).__name__}")
    if edge_attr.dim() == 1:
        edge_attr = edge_attr.view(-1, 1)
    if edge_attr.dim() != 2:
        raise ValueError(f"{layer}: edge_attr must be a [edges, edge_dim] tensor, got shape {tuple(edge_attr.shape)}")
    if edge_attr.size(0) != edge_index.size(1):
        raise ValueError(f"{layer}: edge_attr has {edge_attr.size(0)} rows but edge_index has "
                         f"{edge_index.size(1)} edges")
    if edge_attr.size(1) != lin_edge.in_features:
        raise ValueError(f"{layer}: edge_attr has {edge_attr.size(1)} features per edge, but the layer was built "
                         f"for edge_dim = {lin_edge.in_features}")
    if not edge_attr.is_floating_point():
        raise TypeError(f"{layer}: edge_attr must be a floating-point tensor, got {edge_attr.dtype} "
                        "(convert it with edge_attr.float())")
    if edge_attr.device != lin_edge.weight.device:
        raise ValueError(f"{layer}: edge_attr is on {edge_attr.device} but the layer's parameters are on "
                         f"{lin_edge.weight.device} (move one with .to())")
    return edge_attr


def edge_index_shape(layer: str, edge_index: Tensor) -> Tensor:
    """edge_index as a [2, E] tensor (row 0 sources, row 1 targets)."""
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{layer}: edge_index must have shape [2, E] (row 0 = sources, row 1 = targets), "
                         f"got {list(edge_index.shape)}")
    return edge_index
