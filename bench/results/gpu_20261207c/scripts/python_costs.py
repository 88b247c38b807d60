"""What the Transformer layer's per-call Python is made of, timed piece by piece on this machine's
Python and torch (no tessera needed): call B measured the layer's Python at 29.7 us on the device
(op stood in), where the development machine (Python 3.11, torch 1.13) runs the same path in
12-15 us. The pieces: nn.Module.__call__ on an empty forward, the TF32 checks _linear._fp32_exact
makes per projection check, grad mode, and the tensor reads the memos and checks make."""
import sys
import time

import torch


def best_us(f, n=20000):
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


class Empty(torch.nn.Module):
    def forward(self, x, e):
        return x


m = Empty()
x = torch.randn(8, 8, device="cuda" if torch.cuda.is_available() else "cpu")
rows = [
    ("nn.Module.__call__, empty forward", lambda: m(x, None)),
    ("torch.get_float32_matmul_precision()", torch.get_float32_matmul_precision),
    ("torch.is_grad_enabled()", torch.is_grad_enabled),
    ("x.is_cuda and x.dtype == torch.float32", lambda: x.is_cuda and x.dtype == torch.float32),
    ("x._version, x.data_ptr()", lambda: (x._version, x.data_ptr())),
    ("x.size(0), x.size(-1)", lambda: (x.size(0), x.size(-1))),
    ("isinstance(x, torch.Tensor)", lambda: isinstance(x, torch.Tensor)),
]
try:
    torch.backends.cuda.matmul.fp32_precision
    rows.append(("torch.backends.cuda.matmul.fp32_precision", lambda: torch.backends.cuda.matmul.fp32_precision))
except (AttributeError, AssertionError):
    pass
print(f"python {sys.version.split()[0]}, torch {torch.__version__}")
for name, f in rows:
    print(f"  {name:<50} {best_us(f):6.2f} us")
