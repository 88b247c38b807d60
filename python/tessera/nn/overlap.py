"""A layer's independent branch on a second CUDA stream.

The residual projection of an attention layer (TransformerConv's lin_skip, GATv2Conv's res) is a
dense GEMM that needs only the layer's input, while the fused attention next to it is bound by
gathers and latency: on one stream they run one after the other, each leaving the other's
resources idle. Launched on a side stream, the GEMM's blocks share the SMs with the attention
kernel's. Autograd runs a node's backward on the stream of its forward, so the branch's backward
(two GEMMs and a bias reduction) overlaps the attention backward too; the engine orders the
gradient hand-offs between the streams.

    branch = SideBranch.start(lambda: self.lin_skip(x), like=x)
    out = attention(...)           # on the current stream
    out = out + branch.join()      # the current stream waits for the branch

ENABLED (default on; TESSERA_OVERLAP=0 turns it off) exists for A/B measurements and tests.
"""
import os
from typing import Callable, Dict, Optional

import torch
from torch import Tensor

ENABLED = os.environ.get("TESSERA_OVERLAP", "1") != "0"
_streams: Dict[int, torch.cuda.Stream] = {}


def side_stream(device: torch.device) -> torch.cuda.Stream:
    """One side stream per device, made once (streams are a driver resource; reusing one also
    keeps the caching allocator's per-stream pool warm)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    s = _streams.get(index)
    if s is None:
        s = _streams[index] = torch.cuda.Stream(device=index)
    return s


class SideBranch:
    def __init__(self, value: Tensor, stream: Optional[torch.cuda.Stream]):
        self._value = value
        self._stream = stream

    @classmethod
    def start(cls, fn: Callable[[], Tensor], like: Tensor) -> "SideBranch":
        """Runs fn() on the side stream of like's device once the current stream's work so far
        (which made fn's inputs) is done; on the CPU, or when disabled, runs it here."""
        if not (ENABLED and like.is_cuda):
            return cls(fn(), None)
        main = torch.cuda.current_stream(like.device)
        side = side_stream(like.device)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            value = fn()
        return cls(value, side)

    def join(self) -> Tensor:
        """The branch's result, usable on the current stream: that stream waits for the branch,
        and the allocator is told the tensor is used there (it was allocated on the side stream,
        whose pool must not hand its memory out again before the current stream is done)."""
        if self._stream is not None:
            main = torch.cuda.current_stream(self._value.device)
            main.wait_stream(self._stream)
            self._value.record_stream(main)
            self._stream = None
        return self._value
