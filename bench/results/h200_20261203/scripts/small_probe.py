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
for M in (2708, 19717, 1048576):
    for K, N in ((128, 256), (128, 1024), (64, 64), (256, 256)):
        x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
        row = {"cublas": graph_us(lambda: torch.nn.functional.linear(x, w, b))}
        for v in ("cuda.tf32x3.128x128", "cuda.tf32x3.128x64"):
            os.environ["TESSERA_VARIANT_LINEAR"] = v
            row[v[-7:]] = graph_us(lambda: torch.ops.tessera.linear(x, w, b))
        os.environ.pop("TESSERA_VARIANT_LINEAR")
        tiles = -(-M // 128) * -(-N // 128)
        print(f"  {M:8d} x {K:4d} -> {N:5d} ({tiles:6d} 128x128 tiles): " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()), flush=True)

source, rowptr, col = bc.load_graph("cora")
ei = bc.edge_index_of(rowptr, col, dev)
n = rowptr.numel() - 1
for layer, cls in (("transformer", "TransformerConv"), ("gatv2", "GATv2Conv")):
    conv = getattr(tnn, cls)(128, 64, heads=4).to(dev)
    x = torch.randn(n, 128, device=dev, requires_grad=True)
    gy = torch.randn(n, 256, device=dev)
    def step():
        conv.zero_grad(set_to_none=True); x.grad = None
        conv(x, ei).backward(gy)
    print(f"== {cls} cora 4x64 fwd+bwd: events {ev_ms(step, 30):.1f} us")
    with torch.no_grad():
        print(f"   forward: events {ev_ms(lambda: conv(x, ei), 30):.1f} us")
    for _ in range(3): step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20): step()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=90))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30, max_name_column_width=90))

import time
def host_us(fn, reps=3000):
    for _ in range(100): fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps): fn()
    h = (time.perf_counter() - t) / reps * 1e6
    torch.cuda.synchronize()
    return h

print("== host us per call (no sync), Cora shapes")
x = torch.randn(n, 128, device=dev); w = torch.randn(256, 128, device=dev); b = torch.randn(256, device=dev)
wg = w.clone().requires_grad_()
print(f"  F.linear                         {host_us(lambda: torch.nn.functional.linear(x, w, b)):7.1f}")
print(f"  tessera.linear                   {host_us(lambda: torch.ops.tessera.linear(x, w, b)):7.1f}")
print(f"  tessera.linear (weight needs grad) {host_us(lambda: torch.ops.tessera.linear(x, wg, b)):7.1f}")
print(f"  torch.add                        {host_us(lambda: torch.add(x, x)):7.1f}")
conv = tnn.TransformerConv(128, 64, heads=4).to(dev)
with torch.no_grad():
    conv(x, ei)
    q = conv.lin_query(x); k = conv.lin_key(x); v = conv.lin_value(x)
    g = conv._graph_cache._graph
    print(f"  tessera.attention (transformer)  {host_us(lambda: torch.ops.tessera.attention(g.rowptr, g.col, q, k, v, None, 4, 'transformer', 0.2, 0.0, 0.0, 0, False, False, None, None, None, False, g.graph.id, None, None)):7.1f}")
    print(f"  TransformerConv forward          {host_us(lambda: conv(x, ei)):7.1f}")
    from tessera.nn import _linear
    print(f"  _linear.linears(3)               {host_us(lambda: _linear.linears([conv.lin_query, conv.lin_key, conv.lin_value], x)):7.1f}")
    print(f"  _fp32_exact()                    {host_us(_linear._fp32_exact):7.1f}")
