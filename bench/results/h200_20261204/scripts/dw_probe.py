"""Session 2026-12-04 probe: dW + db of tessera.linear (wgmma weight gradient, full-wave slices)
against cuBLAS + gemv, GPU us per call (20 queued autograd.grad w.r.t. weight and bias), and the error
against float64 at two shapes."""
import sys, statistics
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
dev = "cuda"

def ev_ms(fn, reps=5):
    for _ in range(2): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

def loop_us(fn, reps=20):
    return ev_ms(lambda: [fn() for _ in range(reps)]) * 1e3 / reps

print("== dW, db error against float64 (relative to sum |dy x|)")
for M, NO, KI in [(5000, 1024, 128), (70001, 132, 260), (19717, 3072, 128)]:
    torch.manual_seed(0)
    x = torch.randn(M, KI, device=dev); g = torch.randn(M, NO, device=dev)
    w = torch.randn(NO, KI, device=dev, requires_grad=True); b = torch.randn(NO, device=dev, requires_grad=True)
    ref = g.double().t() @ x.double(); mag = g.abs().double().t() @ x.abs().double()
    rb = g.double().sum(0); mb = g.abs().double().sum(0)
    line = []
    for name, f in [("cublas", torch.nn.functional.linear), ("tessera", torch.ops.tessera.linear)]:
        dw, db = torch.autograd.grad(f(x, w, b), (w, b), g)
        line.append(f"{name} dW {((dw.double() - ref).abs() / mag).max().item():.1e} db {((db.double() - rb).abs() / mb).max().item():.1e}")
    print(f"  {M} x {NO} <- {KI}: " + "  ".join(line), flush=True)

print("== dW + db: GPU us per call, M x N_out <- K_in")
for M, NO, KI in [(19717, 1024, 128), (19717, 3072, 128), (19717, 2048, 128), (2708, 1024, 128), (65536, 1024, 128),
                  (1048576, 256, 128), (1048576, 1536, 128), (1048576, 512, 128), (1048576, 256, 256), (1048576, 1024, 128)]:
    x = torch.randn(M, KI, device=dev); g = torch.randn(M, NO, device=dev)
    w = torch.randn(NO, KI, device=dev, requires_grad=True); b = torch.randn(NO, device=dev, requires_grad=True)
    row = {}
    for name, f in [("cublas", torch.nn.functional.linear), ("tessera", torch.ops.tessera.linear)]:
        y = f(x, w, b)
        row[name] = loop_us(lambda: torch.autograd.grad(y, (w, b), g, retain_graph=True))
    tf = 2 * M * KI * NO / row["tessera"] / 1e6
    print(f"  {M:8d} x {NO:5d} <- {KI:5d}: " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()) + f"  tessera {tf:.0f} TF/s, x{row['cublas'] / row['tessera']:.2f}", flush=True)
