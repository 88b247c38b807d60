"""Session 2026-12-03g probe: tessera.linear's variants (mma.sync tf32x3 tiles, the RS wgmma tiles)
against cuBLAS fp32: error against float64 per variant, and GPU us per call (CUDA graph of 20) at
the layers' shapes. W-as-stored (dX = dY W) shapes are timed through autograd (retain_graph, x only)."""
import os, sys, statistics
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
dev = "cuda"
VARIANTS = ["tf32x3.128x128", "tf32x3.128x64", "tf32x3.64x64", "wgmma.128x128", "wgmma.64x128"]

def ev_ms(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

def graph_us(fn, reps=20):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps): fn()
    return ev_ms(g.replay, reps=10) * 1e3 / reps

def loop_us(fn, reps=20):
    return ev_ms(lambda: [fn() for _ in range(reps)], reps=5) * 1e3 / reps

def forced(v, fn):
    os.environ["TESSERA_VARIANT_LINEAR"] = "cuda." + v
    try:
        return fn()
    finally:
        os.environ.pop("TESSERA_VARIANT_LINEAR")

print("== error: max |y - y64| / (|x| |w|)_row-col, forward and dX (W as stored)")
torch.manual_seed(0)
for M, K, N in [(1000, 260, 200), (300, 1024, 128), (5000, 128, 1024)]:
    x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
    mag = x.abs().double() @ w.abs().double().t() + b.abs().double()
    ref = x.double() @ w.double().t() + b.double()
    g = torch.randn(M, N, device=dev)
    gref = g.double() @ w.double(); gmag = g.abs().double() @ w.abs().double()
    line = []
    for v in ["cublas"] + VARIANTS:
        if v == "cublas":
            y = torch.nn.functional.linear(x, w, b); xg = x.clone().requires_grad_()
            dx, = torch.autograd.grad(torch.nn.functional.linear(xg, w), xg, g)
        else:
            y = forced(v, lambda: torch.ops.tessera.linear(x, w, b))
            xg = x.clone().requires_grad_()
            dx = forced(v, lambda: torch.autograd.grad(torch.ops.tessera.linear(xg, w, None), xg, g)[0])
        e = ((y.double() - ref).abs() / mag).max().item(); ed = ((dx.double() - gref).abs() / gmag).max().item()
        line.append(f"{v} {e:.1e}/{ed:.1e}")
    print(f"  {M} x {K} -> {N}: " + "  ".join(line), flush=True)

print("== forward Y = X W^T + b: GPU us per call (CUDA graph of 20), M x K -> N, TF/s of the best")
shapes = [(19717, 128, 1024), (19717, 128, 256), (2708, 128, 1024), (2708, 128, 256), (1048576, 128, 512)]
for M, K, N in shapes:
    x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
    row = {"cublas": graph_us(lambda: torch.nn.functional.linear(x, w, b)),
           "heur": graph_us(lambda: torch.ops.tessera.linear(x, w, b))}
    for v in VARIANTS:
        row[v] = forced(v, lambda: graph_us(lambda: torch.ops.tessera.linear(x, w, b)))
    best = min((k for k in row if k not in ("cublas", "heur")), key=row.get)
    tf = 2 * M * K * N / row[best] / 1e6
    print(f"  {M:8d} x {K:5d} -> {N:5d}: " + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()) + f"  best {best} {tf:.0f} TF/s", flush=True)

print("== dX = dY W (W as stored): GPU us per call (CUDA graph of 20 autograd.grad), M x N_out -> K_in")
for M, NO, KI in [(19717, 1024, 128), (19717, 3072, 128), (1048576, 512, 128)]:
    x = torch.randn(M, KI, device=dev, requires_grad=True); w = torch.randn(NO, KI, device=dev)
    g = torch.randn(M, NO, device=dev)
    row = {}
    for v in ["heur"] + VARIANTS:
        def run():
            y = torch.ops.tessera.linear(x, w, None)
            return loop_us(lambda: torch.autograd.grad(y, x, g, retain_graph=True))
        row[v] = run() if v == "heur" else forced(v, run)
    yc = torch.nn.functional.linear(x, w)
    row["cublas"] = loop_us(lambda: torch.autograd.grad(yc, x, g, retain_graph=True))
    best = min((k for k in row if k not in ("cublas", "heur")), key=row.get)
    tf = 2 * M * KI * NO / row[best] / 1e6
    print(f"  {M:8d} x {NO:5d} -> {KI:5d}: " + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()) + f"  best {best} {tf:.0f} TF/s", flush=True)

print("== dW, db = dY^T X, colsums(dY): error against float64, tessera vs cuBLAS (autograd of linear)")
for M, NO, KI in [(5000, 1024, 128), (70001, 132, 260)]:
    x = torch.randn(M, KI, device=dev); g = torch.randn(M, NO, device=dev)
    w = torch.randn(NO, KI, device=dev, requires_grad=True); b = torch.randn(NO, device=dev, requires_grad=True)
    ref = g.double().t() @ x.double(); mag = g.abs().double().t() @ x.abs().double()
    rb = g.double().sum(0); mb = g.abs().double().sum(0)
    line = []
    for name, f in [("cublas", torch.nn.functional.linear), ("tessera", torch.ops.tessera.linear)]:
        dw, db = torch.autograd.grad(f(x, w, b), (w, b), g)
        line.append(f"{name} dW {((dw.double() - ref).abs() / mag).max().item():.1e} db {((db.double() - rb).abs() / mb).max().item():.1e}")
    print(f"  {M} x {NO} <- {KI}: " + "  ".join(line), flush=True)

print("== dW + db: GPU us per call (20 queued autograd.grad w.r.t. weight and bias), M x N_out, K_in")
for M, NO, KI in [(19717, 1024, 128), (19717, 3072, 128), (19717, 2048, 128), (2708, 1024, 128), (65536, 1024, 128),
                  (1048576, 256, 128), (1048576, 1536, 128), (1048576, 512, 128), (1048576, 256, 256)]:
    x = torch.randn(M, KI, device=dev); g = torch.randn(M, NO, device=dev)
    w = torch.randn(NO, KI, device=dev, requires_grad=True); b = torch.randn(NO, device=dev, requires_grad=True)
    row = {}
    for name, f in [("cublas", torch.nn.functional.linear), ("tessera", torch.ops.tessera.linear)]:
        y = f(x, w, b)
        row[name] = loop_us(lambda: torch.autograd.grad(y, (w, b), g, retain_graph=True))
    tf = 2 * M * KI * NO / row["tessera"] / 1e6
    print(f"  {M:8d} x {NO:5d} <- {KI:5d}: " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()) + f"  tessera {tf:.0f} TF/s, x{row['cublas'] / row['tessera']:.2f}", flush=True)
