#!/usr/bin/env python3
"""Where the time of a small-graph layer call goes: host microseconds per call (no synchronization,
so the host is the bottleneck and the number is what the Python + dispatcher + launch path costs)
and the torch profiler's per-op table, for tessera's GCNConv and its pieces against PyG's GCNConv.

On graphs like Cora the GPU work of a layer is a few microseconds, so the layer's speed is its host
path; this script is the diagnostic for that regime.

    python3 bench/host_overhead.py [--data-dir DIR] [--width 64] [--device cuda] [--json OUT.json]
"""
import argparse
import os
import time

import torch

import bench_common as bc


def host_us(fn, reps=2000, sync=None):
    for _ in range(50):
        fn()
    if sync:
        sync()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    host = (time.perf_counter() - t) / reps * 1e6
    if sync:
        sync()
    return host


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=os.environ.get("TESSERA_SHARED_DATA", os.path.join(bc.ROOT, "..", "shared", "data")))
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    tessera = bc.import_tessera()
    from tessera.nn import GCNConv
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else None
    cora = os.path.join(a.data_dir, "cora")
    if os.path.isdir(cora):
        _, _, rowptr, col, _, _, _ = tessera.ops.load_node_dataset(cora)
        name = "cora"
    else:
        rowptr, col = tessera.ops.generate_graph("rmat:scale=11,degree=4,seed=1", False)
        name = "rmat:scale=11,degree=4"
    n = rowptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
    ei = torch.stack([col, dst]).to(dev)
    x = torch.randn(n, a.width, device=dev)
    ours = GCNConv(a.width, a.width, cached=True).to(dev)
    rows = {}
    with torch.no_grad():
        ours(x, ei)
        g = ours._cached_graph
        h = ours.lin(x)
        rows["tessera GCNConv forward"] = host_us(lambda: ours(x, ei), sync=sync)
        rows["  lin (torch Linear)"] = host_us(lambda: ours.lin(x), sync=sync)
        rows["  Graph.spmm"] = host_us(lambda: g.spmm(h), sync=sync)
        rows["  raw torch.ops.tessera.spmm"] = host_us(
            lambda: torch.ops.tessera.spmm(g.rowptr, g.col, g.values, h, None, None, None, g.id, 0), sync=sync)
        rows["  bias add"] = host_us(lambda: h + ours.bias, sync=sync)
        rows["torch empty_like (floor of one op)"] = host_us(lambda: torch.empty_like(h), sync=sync)
        try:
            import torch_geometric.nn as pyg_nn
            peer = pyg_nn.GCNConv(a.width, a.width, cached=True).to(dev)
            peer(x, ei)
            rows["PyG GCNConv forward"] = host_us(lambda: peer(x, ei), sync=sync)
        except ImportError:
            pass
    print(f"{name}: {n} nodes, {ei.size(1)} edges, width {a.width}, device {dev}; host microseconds per call")
    for k, v in rows.items():
        print(f"  {k:40s} {v:8.1f}")
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with torch.no_grad(), torch.profiler.profile(activities=acts) as prof:
        for _ in range(100):
            ours(x, ei)
        if sync:
            sync()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
    if a.json:
        bc.write_json(a.json, {"benchmark": "host_overhead", "graph": name, "width": a.width,
                               "device": str(dev), "host_us_per_call": rows})


if __name__ == "__main__":
    main()
