#!/usr/bin/env python3
"""Where the attention layers' forward time goes: per graph/config, the event-timed median (as the
layer bench), the host time of one call (no sync inside), the GPU time (CUDA graph replay, no host),
and a torch.profiler table (CPU ops by self CPU time, CUDA kernels by time)."""
import os, sys, time, statistics
sys.path.insert(0, "bench")
import torch
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
import torch_geometric.nn as pnn
from torch.profiler import profile, ProfilerActivity

graphs = sys.argv[1].split(",")
hcs = [tuple(int(v) for v in s.split("x")) for s in sys.argv[2].split(",")]
prof_rows = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else set()
sides = sys.argv[4].split(",") if len(sys.argv) > 4 else ["tessera", "pyg"]
dev = torch.device("cuda")
for gname in graphs:
    spec, rowptr, col = bc.load_graph(gname, ".carry/data")
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, dev)
    torch.manual_seed(0)
    x = torch.randn(n, 128, device=dev)
    print(f"{gname}: {n} nodes {ei.size(1)} edges", flush=True)
    for H, C in hcs:
        for layer, name in (("gatv2", "GATv2Conv"), ("transformer", "TransformerConv")):
            res = {}
            for side, mod in [(s_, tnn if s_ == "tessera" else pnn) for s_ in sides]:
                conv = getattr(mod, name)(128, C, heads=H).to(dev)
                with torch.no_grad():
                    f = lambda: conv(x, ei)
                    ev = bc.median_ms_cuda(f, warmup=3, reps=50, min_ms=100)
                    host = []
                    for _ in range(50):
                        torch.cuda.synchronize(); t0 = time.perf_counter(); f(); host.append(time.perf_counter() - t0)
                    torch.cuda.synchronize()
                    gpu = bc.graph_us_cuda(f, calls=10, reps=5)
                res[side] = (ev, statistics.median(host) * 1e3, gpu)
                print(f"  {layer:11s} {H}x{C:<3d} {side:7s} events {ev*1e3:8.1f} us  host {statistics.median(host)*1e6:8.1f} us  "
                      f"gpu(graph) {gpu if gpu is None else round(gpu,1)} us", flush=True)
                key = f"{gname}:{layer}:{H}x{C}:{side}"
                if key in prof_rows or f"{gname}:{layer}:{H}x{C}" in prof_rows:
                    with torch.no_grad():
                        for _ in range(3): f()
                        torch.cuda.synchronize()
                        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as pr:
                            for _ in range(10): f()
                            torch.cuda.synchronize()
                    print(f"--- profile {key} (10 calls)")
                    print(pr.key_averages().table(sort_by="self_cpu_time_total", row_limit=25, max_name_column_width=60))
                    print(pr.key_averages().table(sort_by="self_cuda_time_total", row_limit=15, max_name_column_width=60))
                del conv
