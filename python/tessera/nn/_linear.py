"""The layers' dense projections (x W^T + b): on CUDA in fp32, tessera's tensor-core projection; on
the CPU, with their outputs on the ops' output memory.

CUDA: torch.ops.tessera.linear (src/torch/linear_op.cpp) runs fp32 as three tf32 tensor-core
products (include/tessera/ops/linear.hpp: error <= 2^-20 of sum |x w| against fp32 SGEMM's ~2^-22,
where one TF32 pass is 2^-12), 1.24-1.43x faster than cuBLAS's fp32 SGEMM on the H200 at 2^20
rows; dx in backward too. Several projections of one input (linears(), project()) are one op and
one autograd node, tessera.linears (src/torch/linears_op.cpp): one output buffer whose column
blocks the kernel writes, dx summed in one buffer. A user who allows TF32
(torch.set_float32_matmul_precision("high")) gets the Linear, i.e. cuBLAS's TF32, which is faster
still and what they asked for; so does one under torch.autocast, on any device: the Linear then
computes in autocast's type, as PyG's layers do there (custom ops are not cast).

CPU: a fresh CPU tensor of tens of MB is faulted in 4 KB pages on its first write (src/torch/outputs.hpp
has the measurement); the ops' own outputs avoid that with 2 MB-aligned, huge-page advised memory,
and this gives the projections' outputs, and dx in backward, the same memory. Measured on the
2-core development machine, GCNConv on R-MAT 2^16 x 128 (best of 10, three alternations): forward
47-50 -> 35 ms with GOMP_SPINCOUNT=1000, 43-50 -> 41-45 ms with libgomp's default spinning (see
the README's CPU threads note). One projection is torch's Linear's arithmetic (torch.addmm /
torch.mm into the given output: bitwise-equal results); several reading one input (linears(),
project()) are one op and node (tessera.linears, src/torch/linears_op.cpp) with one stacked GEMM
and dx accumulated in place. Small outputs, other
devices and inputs that are not 2-D floating tensors of the weight's dtype go through the Linear
itself, and so does any Linear with forward hooks (torch.nn.utils.prune, for one, recomputes the
weight in a pre-hook) or of a subclass.
"""
import os

import torch
from torch import Tensor

from .._memo import TensorMemo
from ._inputs import autocast_on

_ops = torch.ops.tessera
# Outputs from this size go on huge pages (src/torch/outputs.hpp); below it, or with
# TESSERA_CPU_HUGE_OUTPUTS=0, the Linear itself runs (no autograd function in the way).
_MIN_BYTES = int(_ops.huge_output_min_bytes())


def _plain(lin: torch.nn.Linear) -> bool:
    """A torch Linear itself (not a subclass) with no forward hooks: its forward is x W^T + b."""
    return type(lin) is torch.nn.Linear and not lin._forward_pre_hooks and not lin._forward_hooks


def _parameters_of(lin: torch.nn.Linear) -> tuple:
    """(weight, bias) of a Linear, read from its parameter table (bias None without one). Read
    as lin.weight, each goes through nn.Module.__getattr__, a Python call, on the layers' no-grad
    paths, which read them on every call: 12 such reads took 1.36 us against 0.44 from the tables
    on the GPU machine's Python 3.12 / torch 2.11, and 5.86 against 0.47 us on the development
    machine's 3.11 / 1.13 (bench/results/gpu_20261207c, scripts/getattr_cost.py). A weight that is
    no longer a registered parameter is read as an attribute."""
    p = lin._parameters
    if "weight" in p and "bias" in p:
        return p["weight"], p["bias"]
    return lin.weight, lin.bias


def _fast_path(lin: torch.nn.Linear, x: Tensor) -> bool:
    """A plain Linear (_plain) on a 2-D floating tensor of its dtype."""
    return _plain(lin) and x.dim() == 2 and x.is_floating_point() and x.dtype == _parameters_of(lin)[0].dtype


def _has_fp32_precision() -> bool:
    """Whether this torch has cuda.matmul.fp32_precision (2.9 on). Before it, that object's
    __getattr__ raises AssertionError, not AttributeError, for a name it does not know, so
    getattr() with a default raised on every CUDA fp32 projection (torch 1.13 to 2.8)."""
    try:
        torch.backends.cuda.matmul.fp32_precision
        return True
    except (AttributeError, AssertionError):
        return False


_HAS_FP32_PRECISION = _has_fp32_precision()


def _fp32_exact() -> bool:
    """Whether torch's fp32 matmuls are IEEE fp32 here: the user has not allowed TF32 (torch's
    float32 matmul precision "highest" and, from torch 2.9, cuda.matmul.fp32_precision not "tf32")."""
    if torch.get_float32_matmul_precision() != "highest":
        return False
    return not _HAS_FP32_PRECISION or torch.backends.cuda.matmul.fp32_precision != "tf32"


def _tensor_cores(x: Tensor) -> bool:
    """Whether projections of x go to tessera.linear's tf32x3 kernel: a CUDA fp32 tensor, the user
    has not allowed TF32 (then torch's Linear gives them cuBLAS's TF32, as asked) and autocast is
    off (it asks for them in its own type: torch's Linear casts them)."""
    return x.is_cuda and x.dtype == torch.float32 and _fp32_exact() and not autocast_on(x)


class PreparedWeights:
    """A layer's Linears as tessera.linear reads them without autograd, kept while their parameters
    are unchanged (tessera._memo: an optimizer step, load_state_dict, torch.nn.init or Module.to()
    makes them again): per group of Linears projected together, their weights stacked into one
    [sum of out_features, in] matrix, their biases likewise (zeros for a Linear without one), and
    the stack's split for the wgmma kernels (tessera.linear_split_weight; None where none reads
    one). A group is then one kernel launch, where it was a product (and on the wgmma kernels a
    split) per Linear. Only without autograd, where nothing differentiates through the stack and
    the parameters do not change between calls (an inference loop); training keeps
    tessera.linears, whose backward is per Linear.
    Measured (H100, bench/results/gpu_20261206h): Cora 4x64 forwards' GPU work 33 -> 25 us (GATv2,
    3 -> 2 kernels) and 51 -> 36 us (Transformer, 5 -> 3), the grid's GPU-bound 4x64 rows 1.6-4%
    faster; but their host path, which is what Cora and PubMed take, stayed at 100-140 us (the
    memo's checks cost about what the launches saved: at Cora's size the projections were mma.sync
    kernels, which launch no split). On by default since its layer-level CUDA test passed on the GPU
    (H100, bench/results/gpu_20261207; the kernels' bitwise kept-split checks passed in
    gpu_20261206h); TESSERA_LINEAR_PREPARED=0 turns it and every kept split (weight_split) off."""
    __slots__ = ("_memos",)

    def __init__(self):
        self._memos = {}

    def __reduce__(self):  # copies and pickles start empty: the stacks are remade from the parameters
        return PreparedWeights, ()

    def get(self, lins):
        """(weight, bias, split) of these Linears, stacked in their order."""
        key = tuple(map(id, lins))  # the layer's own Linears: their ids are stable while it lives
        memo = self._memos.get(key)
        if memo is None:
            memo = self._memos[key] = TensorMemo()
        return memo.get([t for lin in lins for t in _parameters_of(lin)], lambda: _stack(lins))


def _stack(lins):
    with torch.no_grad():
        w = lins[0].weight if len(lins) == 1 else torch.cat([lin.weight for lin in lins])
        b = None
        if any(lin.bias is not None for lin in lins):
            b = torch.cat([lin.weight.new_zeros(lin.out_features) if lin.bias is None else lin.bias
                           for lin in lins]) if len(lins) > 1 else lins[0].bias
        return w.detach(), None if b is None else b.detach(), weight_split(w)


def weight_split(w: Tensor, w2: Tensor = None):
    """w (and a linear_heads call's weight2) as tessera's wgmma projection kernels read them
    (tessera.linear_split_weight), for a caller that keeps it while they are unchanged; None where
    no kernel reads one (CPU, other dtypes and devices)."""
    if not _PREPARED:
        return None
    split = _ops.linear_split_weight(w.detach(), None if w2 is None else w2.detach())
    return split if split.numel() else None


def _prepared_product(prepared: PreparedWeights, lins, x: Tensor, residual=None):
    """[lin(x) for lin in lins] (+ residual, one Linear) from the prepared stack: one tessera.linear,
    the projections its output's column blocks."""
    w, b, split = prepared.get(lins)
    y = _ops.linear(x, w, b, residual, split)
    # split_with_sizes, not Tensor.split: the same views without its Python wrapper (2.4 us a call here)
    return [y] if len(lins) == 1 else list(y.split_with_sizes([lin.out_features for lin in lins], 1))


def _use_prepared(prepared, x: Tensor) -> bool:
    return _PREPARED and prepared is not None and not torch.is_grad_enabled() and _tensor_cores(x)


_PREPARED = os.environ.get("TESSERA_LINEAR_PREPARED", "1") != "0"


def linears(lins, x: Tensor, prepared: "PreparedWeights" = None):
    """[lin(x) for lin in lins]: on CUDA in fp32, tessera's tensor-core projection (tf32x3: fp32-level
    error, 1.24-1.43x cuBLAS's fp32 SGEMM on the H200) unless the user allowed TF32, several of them
    as one op (_as_one_op), or without autograd, with the layer's `prepared` weights, one product
    (PreparedWeights); on the CPU one op for any large output or dx; otherwise each Linear
    itself."""
    lins = list(lins)
    if _use_prepared(prepared, x) and all(_fast_path(lin, x) for lin in lins):  # False at once with autograd
        return _prepared_product(prepared, lins, x)
    # The device is checked first and alone: on a GPU this runs on every layer call's host path,
    # which is the layer's whole time on small graphs (the full checks took ~2 us per call on the
    # development machine, 0.3 us with the device first).
    if not x.is_cpu:
        if not _tensor_cores(x):
            return [lin(x) for lin in lins]
        fast = [_fast_path(lin, x) for lin in lins]
        if len(lins) > 1 and all(fast):
            return _as_one_op(lins, x)
        return [_ops.linear(x, lin.weight, lin.bias) if f else lin(x) for lin, f in zip(lins, fast)]
    if not all(_fast_path(lin, x) for lin in lins) or \
            x.size(0) * max([lin.out_features for lin in lins] + [x.size(-1)]) * x.element_size() < _MIN_BYTES \
            or autocast_on(x):
        return [lin(x) for lin in lins]
    return _as_one_op(lins, x)


def _as_one_op(lins, x: Tensor):
    """[lin(x) for lin in lins] as one op and one autograd node (tessera.linears,
    src/torch/linears_op.cpp): one output buffer, the projections its column blocks (views: not to be
    modified in place), dx summed in one buffer in backward."""
    return _ops.linears(x, [lin.weight for lin in lins], [lin.bias for lin in lins])


def add_to_fresh(out: Tensor, other: Tensor) -> Tensor:
    """out + other for an `out` the layer just made (the fused op's output, which its backward
    does not keep, or the mean over heads, whose backward keeps nothing): in place, in training
    too, when the sum keeps out's dtype and shape, so no second [N, H*C] buffer is written (on
    the CPU also a fresh page-faulted allocation) or held until the backward; else out of place."""
    if torch.result_type(out, other) != out.dtype or \
            torch.broadcast_shapes(out.shape, other.shape) != out.shape:
        return out + other
    return out.add_(other)


def linear_add(lin: torch.nn.Linear, x: Tensor, out: Tensor, prepared: PreparedWeights = None) -> Tensor:
    """out + lin(x) for an `out` the layer just made (see add_to_fresh), with no [N, out_features]
    projection written and read back where the types allow (TransformerConv's lin_skip: a 2^20 x
    128 -> 256 projection wrote 1 GiB, and its add moved 3 GiB more):
    - on CUDA in fp32, unless the user allowed TF32: one tessera.linear with `out` as its residual,
      the projection and the sum in one kernel, rounding as out + lin(x) does; without autograd,
      with the layer's `prepared` weights, it launches no split of the weight (PreparedWeights);
    - elsewhere, with out, x and the weight of one type and autocast off: the GEMM accumulates into
      out in place (addmm_, beta = 1), then the bias;
    - otherwise (autocast, mixed types): the projection, then add_to_fresh."""
    if _fast_path(lin, x) and out.dtype == x.dtype and out.shape == (x.size(0), lin.out_features):
        weight, bias = _parameters_of(lin)  # from the table, for both branches (_parameters_of)
        if _tensor_cores(x):
            if _use_prepared(prepared, x):
                return _prepared_product(prepared, [lin], x, out)[0]
            return _ops.linear(x, weight, bias, out)
        if not autocast_on(x):
            out = out.addmm_(x, weight.t())
            return out if bias is None else out.add_(bias)
    return add_to_fresh(out, linear(lin, x))


def linear(lin: torch.nn.Linear, x: Tensor, prepared: PreparedWeights = None) -> Tensor:
    """lin(x), with the output (and dx) on the ops' output memory when it is a large CPU tensor."""
    return linears([lin], x, prepared)[0]


def _torch_precision(x: Tensor) -> bool:
    """Products the user asked torch for in less than fp32: a CUDA fp32 tensor's where TF32 is
    allowed, or any under autocast. torch's linear gives them that."""
    return (x.is_cuda and x.dtype == torch.float32 and not _fp32_exact()) or autocast_on(x)


def products(x: Tensor, weights, biases):
    """[x w^T + b for w, b in zip(weights, biases)] for weights the layer derives from its parameters
    (no Linear of their own): one tessera.linears op, whose outputs are column blocks of one buffer
    (on CUDA fp32 tessera's tf32x3 kernel per block; on the CPU one GEMM into the ops' output
    memory), unless the user allowed TF32 or autocast is on (then torch's linear, as linears() does)."""
    if _torch_precision(x):
        return [torch.nn.functional.linear(x, w, b) for w, b in zip(weights, biases)]
    return list(_ops.linears(x, list(weights), list(biases)))


def product(x: Tensor, weight: Tensor, bias=None, split=None) -> Tensor:
    """products(x, [weight], [bias])[0], or with weight's kept split (weight_split, made without
    autograd) one tessera.linear that launches no split of its own."""
    if split is not None and _tensor_cores(x):
        return _ops.linear(x, weight, bias, None, split)
    return products(x, [weight], [bias])[0]


def heads_product(x: Tensor, weight: Tensor, bias=None, x2=None, weight2=None, bias2=None, split=None) -> Tensor:
    """Per-head projections side by side, plus one every head shares: head h's column block of x
    (weight's in_features wide) times weight's row block h (+ bias), written into column block h of
    one output, + x2 weight2^T + bias2 over all of them (x2, weight2, bias2 optional). One
    tessera.linear_heads op (src/torch/linear_heads_op.cpp): on CUDA fp32 on compute capability
    9.0 one launch of tessera's tf32x3 wgmma projection, so the shared projection costs no pass
    over the output of its own; elsewhere a product per head and the shared one added. Unless the
    user allowed TF32 or autocast is on: then torch's linear, as linears() does.
    split: weight_split(weight, weight2), kept by the caller while they are unchanged (the kernel
    then launches no split of its own)."""
    if _torch_precision(x):
        heads = x.size(1) // weight.size(1)
        bs = bias.chunk(heads) if bias is not None else [None] * heads
        y = torch.cat([torch.nn.functional.linear(xh, wh, bh)
                       for xh, wh, bh in zip(x.chunk(heads, 1), weight.chunk(heads), bs)], dim=1)
        return y if x2 is None else y + torch.nn.functional.linear(x2, weight2, bias2)
    return _ops.linear_heads(x, weight, bias, x2, weight2, bias2, split)


def project(pairs, prepared: PreparedWeights = None):
    """[lin(x) for lin, x in pairs], the Linears that read the same tensor through one linears()."""
    groups = {}
    for i, (lin, x) in enumerate(pairs):
        groups.setdefault(id(x), (x, []))[1].append(i)
    outs = [None] * len(pairs)
    for x, idx in groups.values():
        for i, y in zip(idx, linears([pairs[i][0] for i in idx], x, prepared)):
            outs[i] = y
    return outs
