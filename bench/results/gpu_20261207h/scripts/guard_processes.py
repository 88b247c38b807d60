"""Call B3: does making torch.compiler.disable's wrapper (what tessera.nn._compile does at import),
or running it once, slow the rest of the process? The stand-in's plain forward timed three times in
a process per mode: "none" (dynamo never touched), "made" (a wrapper made, never run), "ran" (a
wrapper made and run once)."""
import sys

import torch

from guard_cost_torch import Stand, best_us

mode = sys.argv[1]
m = Stand().cuda()
x = torch.randn(256, 64, device="cuda")
if mode in ("made", "ran"):
    wrapped = torch.compiler.disable(Stand.forward)
    if mode == "ran":
        with torch.no_grad():
            wrapped(m, x)
print(mode, " ".join(f"{best_us(m, x):.1f}" for _ in range(3)), "us")
