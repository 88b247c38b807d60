"""How long the Transformer layer's 12 parameter reads take on this machine's Python and torch:
through nn.Module.__getattr__ (lin.weight) against the modules' own tables (lin._parameters), the
cut the nineteenth session's trim made (38-48 -> 22-26 us per layer call on the development
machine, torch 1.13; predicted 10-12 us on the device's host, not seen in call B)."""
import sys
import time

import torch

lins = [torch.nn.Linear(128, 256) for _ in range(4)]


def best_us(f, n=20000):
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def by_attribute():
    for lin in lins:
        lin.weight, lin.bias, lin.training


def by_table():
    for lin in lins:
        p = lin._parameters
        p["weight"], p["bias"], lin.training


print(f"python {sys.version.split()[0]}, torch {torch.__version__}")
print(f"12 reads through nn.Module.__getattr__: {best_us(by_attribute):.2f} us")
print(f"12 reads from the modules' tables:      {best_us(by_table):.2f} us")
