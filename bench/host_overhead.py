#!/usr/bin/env python3
"""Where the time of a small-graph layer call goes: host microseconds per call (no synchronization,
so the host is the bottleneck and the number is what the Python + dispatcher + launch path costs)
and the torch profiler's per-op table, for a tessera layer and its pieces against PyG's layer.

On graphs like Cora the GPU work of a layer is a few microseconds, so the layer's speed is its host
path; this script is the diagnostic for that regime.

    python3 bench/host_overhead.py [--layer gcn|gatv2|transformer] [--hc 4x64] [--graph cora]
                                   [--data-dir DIR] [--width 64] [--device cuda] [--json OUT.json]
                                   [--profile forward|forward+backward]
--width is GCN's input and output width and the attention layers' input width. --profile picks the
call the profiler tables show (forward+backward: attention layers); with it, a cProfile table of
the calling thread's Python functions follows (on CUDA, autograd runs backward on its own thread,
which cProfile does not see: the torch profiler's table covers every thread).
"""
import argparse
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
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    p.add_argument("--layer", default="gcn", choices=["gcn", "gatv2", "transformer"])
    p.add_argument("--hc", default="4x64", help="attention layers: heads x channels")
    p.add_argument("--graph", default="cora", help="a data set under --data-dir or a generator spec")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--json", default=None)
    p.add_argument("--profile", default="forward", choices=["forward", "forward+backward"])
    a = p.parse_args()
    if a.profile != "forward" and a.layer == "gcn":
        p.error("--profile forward+backward is for the attention layers")
    bc.import_tessera()
    import tessera.nn as tnn
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else None
    loaded = bc.load_graph(a.graph, a.data_dir)
    if loaded is None:  # no shared data here: a generated graph of Cora's size
        loaded = bc.load_graph("rmat:scale=11,degree=4,seed=1")
    name, rowptr, col = loaded
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, dev)
    x = torch.randn(n, a.width, device=dev)
    ours, rows, calls = attention_rows(a, tnn, x, ei, dev, sync) if a.layer != "gcn" else gcn_rows(a, tnn, x, ei, dev, sync)
    print(f"{name}: {n} nodes, {ei.size(1)} edges, {a.layer}, width {a.width}, device {dev}; host microseconds per call")
    for k, v in rows.items():
        print(f"  {k:40s} {v:8.1f}")
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    call = calls[a.profile]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(100):
            call()
        if sync:
            sync()
    print(f"torch profiler, 100 calls of the {a.profile}:")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30))
    if a.profile != "forward":
        import cProfile
        import pstats
        prof_py = cProfile.Profile()
        prof_py.runcall(lambda: [call() for _ in range(200)])
        print(f"cProfile, 200 calls of the {a.profile} (calling thread):")
        pstats.Stats(prof_py).sort_stats("tottime").print_stats(25)
    if a.json:
        bc.write_json(a.json, {"benchmark": "host_overhead", "graph": name, "layer": a.layer, "hc": a.hc,
                               "width": a.width, "device": str(dev), "host_us_per_call": rows})


def attention_rows(a, tnn, x, ei, dev, sync):
    H, C = (int(v) for v in a.hc.split("x"))
    cls = {"gatv2": "GATv2Conv", "transformer": "TransformerConv"}[a.layer]
    try:
        import torch_geometric.nn as pyg_nn
        peer = getattr(pyg_nn, cls)(a.width, C, heads=H).to(dev)
    except ImportError:
        peer = None
    ours = getattr(tnn, cls)(a.width, C, heads=H).to(dev)
    xg = x.detach().clone().requires_grad_()
    gy = torch.ones(x.size(0), H * C, device=dev)
    rows = {}

    def step(conv):  # as the benchmarks time it: gradients set to None, not accumulated
        conv.zero_grad(set_to_none=True)
        xg.grad = None
        conv(xg, ei).backward(gy)
    for who, conv in (("tessera", ours), ("PyG", peer)):
        if conv is None:
            continue
        with torch.no_grad():
            conv(x, ei)
            rows[f"{who} {cls} forward"] = host_us(lambda: conv(x, ei), sync=sync)
        rows[f"{who} {cls} forward+backward"] = host_us(lambda: step(conv), reps=500, sync=sync)
    with torch.no_grad():
        lin = ours.lin_l if a.layer == "gatv2" else ours.lin_query
        rows["one projection (torch Linear)"] = host_us(lambda: lin(x), sync=sync)
        rows["torch empty_like (floor of one op)"] = host_us(lambda: torch.empty_like(x), sync=sync)

    def forward():
        with torch.no_grad():
            ours(x, ei)

    return ours, rows, {"forward": forward, "forward+backward": lambda: step(ours)}


def gcn_rows(a, tnn, x, ei, dev, sync):
    GCNConv = tnn.GCNConv
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

    def forward():
        with torch.no_grad():
            ours(x, ei)
    return ours, rows, {"forward": forward}


if __name__ == "__main__":
    main()
