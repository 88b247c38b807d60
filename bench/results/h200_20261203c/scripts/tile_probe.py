"""Call-2 probe (2026-12-03c): GPU us per call (CUDA graph of 20) of tessera.linear's tiles,
including the new 64x64, at the attention layers' projection (K = 128) and dx (N = 128, K = H*C)
shapes, against cuBLAS fp32 (F.linear)."""
import os, sys, statistics
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
dev = "cuda"
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
    return ev_ms(g.replay) * 1e3 / reps
shapes = [(19717, 1024, 128), (19717, 512, 128), (19717, 256, 128), (2708, 1024, 128), (2708, 256, 128),
          (1048576, 256, 128), (65536, 1024, 128), (19717, 128, 2048), (19717, 128, 3072), (2708, 128, 512),
          (1048576, 128, 512)]
if os.environ.get("TILE_SHAPES") == "small":  # the shapes whose heuristic tile changed, quickly
    shapes = [(19717, 1024, 128), (19717, 256, 128), (2708, 1024, 128), (2708, 128, 512), (65536, 1024, 128)]
print("== linear: GPU us per call (CUDA graph of 20), M x K -> N")
for M, K, N in shapes:
    x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
    row = {"cublas": graph_us(lambda: torch.nn.functional.linear(x, w, b)),
           "heur": graph_us(lambda: torch.ops.tessera.linear(x, w, b))}
    for v in ("128x128", "128x64", "64x64"):
        os.environ["TESSERA_VARIANT_LINEAR"] = "cuda.tf32x3." + v
        row[v] = graph_us(lambda: torch.ops.tessera.linear(x, w, b))
    os.environ.pop("TESSERA_VARIANT_LINEAR")
    best = min((k for k in row if k not in ("cublas", "heur")), key=row.get)
    print(f"  {M:8d} x {K:5d} -> {N:5d}: " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()) + f"  best {best}", flush=True)
