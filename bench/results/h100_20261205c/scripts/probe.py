"""Session 2026-12-05c probe: tessera.linear's forward variants against cuBLAS fp32 at the layers'
shapes (K = 128 inputs): error against float64 per variant, and GPU us per call (CUDA graph of 20)."""
import os, sys, statistics
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
dev = "cuda"
VARIANTS = ["tf32x3.128x128", "wgmma.128x128", "wgmma.64x128", "wgmma.resident"]

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

def forced(v, fn):
    os.environ["TESSERA_VARIANT_LINEAR"] = "cuda." + v
    try:
        return fn()
    finally:
        os.environ.pop("TESSERA_VARIANT_LINEAR")

print(torch.cuda.get_device_name(), flush=True)
print("== error: max |y - y64| / (|x| |w| + |b|)", flush=True)
torch.manual_seed(0)
for M, K, N in [(1000, 100, 200), (5000, 128, 1024), (70000, 64, 384)]:
    x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
    mag = x.abs().double() @ w.abs().double().t() + b.abs().double()
    ref = x.double() @ w.double().t() + b.double()
    line = []
    for v in ["cublas"] + VARIANTS:
        y = torch.nn.functional.linear(x, w, b) if v == "cublas" else forced(v, lambda: torch.ops.tessera.linear(x, w, b))
        line.append(f"{v} {((y.double() - ref).abs() / mag).max().item():.1e}")
    print(f"  {M} x {K} -> {N}: " + "  ".join(line), flush=True)

print("== forward Y = X W^T + b: GPU us per call (CUDA graph of 20), M x K -> N; TF/s of the best", flush=True)
shapes = [(2708, 128, 256), (2708, 128, 1024), (19717, 128, 256), (19717, 128, 1024), (19717, 128, 2048),
          (65536, 128, 1024), (1048576, 128, 256), (1048576, 128, 512), (1048576, 128, 1024), (1048576, 64, 512)]
for M, K, N in shapes:
    x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
    row = {"cublas": graph_us(lambda: torch.nn.functional.linear(x, w, b)),
           "heur": graph_us(lambda: torch.ops.tessera.linear(x, w, b))}
    for v in VARIANTS:
        row[v] = forced(v, lambda: graph_us(lambda: torch.ops.tessera.linear(x, w, b)))
    best = min((k for k in row if k not in ("cublas", "heur")), key=row.get)
    tf = 2 * M * K * N / row[best] / 1e6
    print(f"  {M:8d} x {K:4d} -> {N:5d}: " + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()) + f"  best {best} {tf:.0f} TF/s", flush=True)
