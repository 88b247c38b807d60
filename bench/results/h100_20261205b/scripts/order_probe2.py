#!/usr/bin/env python3
"""Tessera's Cora forward after PyG's measure(), with tessera's first call before (mode C) or after
(mode B, as the layer bench) PyG's. Per config: event median, host time per call, thread count,
and a profiler table of 50 calls (CPU ops by self CPU time)."""
import gc, os, statistics, sys, time
sys.path.insert(0, "bench")
import torch
import bench_common as bc
import attention_layer_bench as alb
bc.import_tessera()
import tessera.nn as tnn
import torch_geometric.nn as pnn
from torch.profiler import profile, ProfilerActivity
mode = sys.argv[1]
dev = torch.device("cuda")
spec, rowptr, col = bc.load_graph("cora", ".carry/data")
n = rowptr.numel() - 1
ei = bc.edge_index_of(rowptr, col, dev)
torch.manual_seed(0)
x = torch.randn(n, 128, device=dev)
threads = lambda: len(os.listdir("/proc/self/task"))
for H, C in [(4, 64), (8, 128)]:
    ours = tnn.GATv2Conv(128, C, heads=H).to(dev)
    peer = pnn.GATv2Conv(128, C, heads=H).to(dev)
    ours.load_state_dict(peer.state_dict())
    fo = lambda: ours(x, ei)
    print(f"mode {mode} {H}x{C}: threads at start {threads()}, torch threads {torch.get_num_threads()}", flush=True)
    if mode == "C":
        with torch.no_grad():
            fo(); torch.cuda.synchronize()
    alb.measure(peer, x, ei, 5)
    print(f"  threads after PyG measure {threads()}", flush=True)
    gc.collect(); torch.cuda.empty_cache()
    with torch.no_grad():
        fo(); torch.cuda.synchronize()
        del peer; gc.collect(); torch.cuda.empty_cache()
        ev = bc.median_ms_cuda(fo, warmup=1, reps=5, min_ms=bc.LAYER_MIN_MS)
        host = []
        for _ in range(100):
            torch.cuda.synchronize(); t0 = time.perf_counter(); fo(); host.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        print(f"  events {ev*1e3:.1f} us, host {statistics.median(host)*1e6:.1f} us, threads {threads()}", flush=True)
        with profile(activities=[ProfilerActivity.CPU]) as pr:
            for _ in range(50): fo()
            torch.cuda.synchronize()
    print(pr.key_averages().table(sort_by="self_cpu_time_total", row_limit=14, max_name_column_width=50), flush=True)
    del ours; gc.collect(); torch.cuda.empty_cache()
