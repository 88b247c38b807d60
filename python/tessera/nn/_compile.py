"""The layers under torch.compile. tessera's ops are C++ kernels with their own autograd and no fake
(meta) kernels, so dynamo cannot trace through them; a layer's forward instead runs outside the
compiled graph (a graph break, then the layer eagerly, as without torch.compile), and the rest of
the model is compiled around it. The layers' work is already fused kernels: there is nothing for
the compiler to fuse inside them.

TESSERA_COMPILE_EAGER=0 leaves the forward as it is (for A/B measurements)."""
import functools
import os

import torch

_ON = os.environ.get("TESSERA_COMPILE_EAGER", "1") != "0"
_compiler = getattr(torch, "compiler", None)  # torch >= 2.1; Debian's 1.13 has no torch.compile
_is_compiling = getattr(_compiler, "is_compiling", None)  # torch >= 2.3
_disable = getattr(_compiler, "disable", None)


def eager_under_compile(cls):
    """Class decorator: cls.forward as it is, but called while dynamo traces (torch.compile) run
    outside the graph. Outside tracing the test is one call (is_compiling), not disable's wrapper
    (which sets dynamo's frame callback on every call)."""
    if not (_ON and _is_compiling and _disable):
        return cls
    forward = cls.forward
    outside = _disable(forward)

    @functools.wraps(forward)
    def guarded(self, *args, **kwargs):
        if _is_compiling():
            return outside(self, *args, **kwargs)
        return forward(self, *args, **kwargs)
    cls.forward = guarded
    return cls
