# Prototype: GCN inference as (A X) W in row chunks, SpMM of chunk i+1 (side stream) overlapping the GEMM of chunk i.
#   python3 gcn_pipe.py [spec] [width]
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
from tessera import Graph
import tessera.nn as tnn
from gcn_bench import GRAPHS
spec, sym = GRAPHS[sys.argv[1] if len(sys.argv) > 1 else "grid"]
F = int(sys.argv[2]) if len(sys.argv) > 2 else 256
rowptr, col = tessera.ops.generate_graph(spec, sym)
n = rowptr.numel() - 1
dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
ei = torch.stack([col.long(), dst]).cuda()
x = torch.randn(n, F, device="cuda")
conv = tnn.GCNConv(F, F).cuda()
torch.nn.init.uniform_(conv.bias, -1, 1)
g = conv._graph(x, ei, None)
Wt = conv.lin.weight.t()
b = conv.bias
def ms(fn, reps=15):
    for _ in range(3): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]
def chunks(k):
    rp = g.rowptr.cpu()
    out = []
    for i in range(k):
        r0, r1 = i * n // k, (i + 1) * n // k
        e0, e1 = int(rp[r0]), int(rp[r1])
        out.append((r0, r1, Graph(g.rowptr[r0:r1 + 1] - e0, g.col[e0:e1], g.values[e0:e1], n)))
    return out
side_lo = torch.cuda.Stream(priority=0)
side_hi = torch.cuda.Stream(priority=-1)
def pipe(subs, side, gemm_side=False):
    main = torch.cuda.current_stream()
    out = torch.empty(n, F, device="cuda")
    side.wait_stream(main)
    for r0, r1, sub in subs:
        with torch.cuda.stream(side):
            z = sub.spmm(x)
            ev = torch.cuda.Event(); ev.record(side)
        main.wait_event(ev)
        torch.addmm(b, z, Wt, out=out[r0:r1])
        z.record_stream(main)
    main.wait_stream(side)
    return out
with torch.no_grad():
    ref = g.spmm(x @ Wt, bias=b)
    r = {"gemm": ms(lambda: x @ Wt), "spmm": ms(lambda: g.spmm(x)), "layer_now": ms(lambda: conv(x, ei)),
         "seq_AXW": ms(lambda: g.spmm(x @ Wt, bias=b)), "seq_(AX)W": ms(lambda: torch.addmm(b, g.spmm(x), Wt))}
    for k in (2, 4, 8, 16):
        subs = chunks(k)
        for name, side in (("lo", side_lo), ("hi", side_hi)):
            y = pipe(subs, side)
            err = float((y - ref).abs().max())
            r[f"pipe{k}_{name}"] = ms(lambda: pipe(subs, side))
            r[f"pipe{k}_{name}_err"] = err
    print(spec, F, {k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}, flush=True)
