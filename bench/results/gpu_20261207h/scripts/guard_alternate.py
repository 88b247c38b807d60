"""Call B2: the stand-in of guard_cost_torch.py, plain and behind the is_compiling guard alternated
three times in a process where no disable wrapper is ever made (is drift, or dynamo's wrapper having
run, what made later forms slower there?)."""
import time

import torch

from guard_cost_torch import Stand, best_us  # noqa: E402 (same folder)

m = Stand().cuda()
x = torch.randn(256, 64, device="cuda")
plain = Stand.forward.__get__(m)


def guarded(*a, **k):
    if torch.compiler.is_compiling():
        raise AssertionError("not compiling here")
    return plain(*a, **k)


for rep in range(3):
    m.forward = plain
    p = best_us(m, x)
    m.forward = guarded
    print(f"rep {rep}: plain {p:.1f} us, guard {best_us(m, x):.1f} us")
