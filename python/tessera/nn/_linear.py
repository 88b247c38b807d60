"""The layers' dense projections (x W^T + b) on the CPU, with their outputs on the ops' output memory.

A fresh CPU tensor of tens of MB is faulted in 4 KB pages on its first write (src/torch/outputs.hpp
has the measurement); the ops' own outputs avoid that with 2 MB-aligned, huge-page advised memory,
and this gives the projections' outputs, and dx in backward, the same memory. Measured on the
2-core development machine, GCNConv on R-MAT 2^16 x 128 (best of 10, three alternations): forward
47-50 -> 35 ms with GOMP_SPINCOUNT=1000, 43-50 -> 41-45 ms with libgomp's default spinning (see
the README's CPU threads note). Same arithmetic as torch's Linear (torch.addmm / torch.mm into the
given output: bitwise-equal results); small outputs, other devices and inputs that are not 2-D
floating tensors of the weight's dtype go through the Linear itself, and so does any Linear
with forward hooks (torch.nn.utils.prune, for one, recomputes the weight in a pre-hook) or of a
subclass.
"""
import torch
from torch import Tensor

_ops = torch.ops.tessera
# Outputs from this size go on huge pages (src/torch/outputs.hpp); below it, or with
# TESSERA_CPU_HUGE_OUTPUTS=0, the Linear itself runs (no autograd function in the way).
_MIN_BYTES = int(_ops.huge_output_min_bytes())


class _CpuLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        out = _ops.empty_output([x.size(0), w.size(0)], x.dtype)
        if b is None:
            torch.mm(x, w.t(), out=out)
        else:
            torch.addmm(b, x, w.t(), out=out)
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        return out

    @staticmethod
    def backward(ctx, gy):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx = dw = db = None
        if need[0]:
            dx = torch.mm(gy, w, out=_ops.empty_output(list(x.shape), x.dtype))
        if need[1]:
            dw = gy.t().mm(x)
        if ctx.has_bias and need[2]:
            db = gy.sum(0)
        return dx, dw, db


def linear(lin: torch.nn.Linear, x: Tensor) -> Tensor:
    """lin(x), with the output (and dx) on the ops' output memory when it is a large CPU tensor."""
    if type(lin) is not torch.nn.Linear or lin._forward_pre_hooks or lin._forward_hooks or \
            x.device.type != "cpu" or x.dim() != 2 or not x.is_floating_point() or x.dtype != lin.weight.dtype or \
            x.size(0) * lin.out_features * x.element_size() < _MIN_BYTES:
        return lin(x)
    return _CpuLinear.apply(x, lin.weight, lin.bias)
