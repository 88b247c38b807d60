# Gathering 17M narrow rows (D = 8 edge features) in torch 2.11 on the H200: index_select against
# the alternatives, forward and backward, sequential-ish (GATv2 self-loop alignment) and random order.
import torch
def med(f, reps=9):
    f(); torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]
n, D = 17_000_000, 8
for order in ("near-sequential", "random"):
    idx = torch.arange(n, device="cuda") if order == "near-sequential" else torch.randperm(n, device="cuda")
    if order == "near-sequential":
        idx = idx.view(-1, 17).flip(1).reshape(-1)  # short reversed runs, like loops moved into rows
    i32, i64 = idx.int(), idx.long()
    for dt in (torch.float32, torch.float16):
        t = torch.randn(n, D, device="cuda", dtype=dt)
        ref = t.index_select(0, i64)
        cands = {
            "index_select int32": lambda: t.index_select(0, i32),
            "index_select int64": lambda: t.index_select(0, i64),
            "gather expand int64": lambda: torch.gather(t, 0, i64.unsqueeze(1).expand(-1, D)),
            "advanced t[i64]": lambda: t[i64],
            "embedding": lambda: torch.nn.functional.embedding(i64, t),
        }
        for k, f in cands.items():
            assert torch.equal(f(), ref), k
            print(f"{order:16s} {str(dt):14s} fwd {k:22s} {med(f):8.3f} ms")
        tg = t.detach().requires_grad_()
        g = torch.randn(n, D, device="cuda", dtype=dt)
        bw = {
            "index_select int32": lambda: torch.autograd.grad(tg.index_select(0, i32), tg, g),
            "gather expand int64": lambda: torch.autograd.grad(torch.gather(tg, 0, i64.unsqueeze(1).expand(-1, D)), tg, g),
            "index_add_ int32 (bwd alone)": lambda: torch.zeros_like(t).index_add_(0, i32, g),
            "scatter_add_ (bwd alone)": lambda: torch.zeros_like(t).scatter_add_(0, i64.unsqueeze(1).expand(-1, D), g),
        }
        for k, f in bw.items():
            print(f"{order:16s} {str(dt):14s} f+b {k:28s} {med(f):8.3f} ms")
