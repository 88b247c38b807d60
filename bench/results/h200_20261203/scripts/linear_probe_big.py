"""Call-2 probe: (1) tessera.linear vs F.linear (cuBLAS fp32) GPU time at the small graphs' shapes,
(2) fwd+bwd profiles (CPU + CUDA) of tessera's Transformer/GATv2 on Cora, 4x64."""
import os, sys, statistics
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
from torch.profiler import ProfilerActivity, profile
dev = "cuda"

def ev_ms(fn, reps=50):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts) * 1e3

def graph_us(fn, reps=20):
    try:
        return _graph_us(fn, reps)
    except Exception as e:
        print("   (CUDA graph capture failed, events instead:", str(e).splitlines()[0], ")")
        torch.cuda.synchronize()
        return ev_ms(fn)

def _graph_us(fn, reps=20):
    """GPU time per call without host overhead: a CUDA graph of 20 calls."""
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps): fn()
    return ev_ms(g.replay, 20) / reps

print("== linear: GPU us per call (CUDA graph of 20), M x K -> N")
for M in (1048576,):
    for K, N in ((128, 256), (128, 1024), (64, 64), (256, 256)):
        x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
        row = {"cublas": graph_us(lambda: torch.nn.functional.linear(x, w, b))}
        for v in ("cuda.tf32x3.128x128", "cuda.tf32x3.128x64"):
            os.environ["TESSERA_VARIANT_LINEAR"] = v
            row[v[-7:]] = graph_us(lambda: torch.ops.tessera.linear(x, w, b))
        os.environ.pop("TESSERA_VARIANT_LINEAR")
        tiles = -(-M // 128) * -(-N // 128)
        print(f"  {M:8d} x {K:4d} -> {N:5d} ({tiles:6d} 128x128 tiles): " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()), flush=True)

