#!/usr/bin/env python3
"""GCN layer on the CPU: tessera.nn.GCNConv vs PyG's semantics in plain torch (index_select +
index_add_, tests/python/pyg_reference.py), same threads, same graph, same weights, timed in the
same run. Both layers use cached=True (normalization built once, excluded from the timings and
reported separately). Forward and forward+backward (w.r.t. x and the weights), medians.

    python3 bench/gcn_cpu_bench.py [--spec rmat:scale=16,degree=16,seed=1] [--width 128] [--threads 2]
Writes bench/results/gcn_cpu_<date>.json (or --out PATH).
"""
import argparse
import datetime
import os
import time

import torch

import bench_common as bc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default="rmat:scale=16,degree=16,seed=1")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    tessera = bc.import_tessera()
    import pyg_reference as ref
    from tessera.nn import GCNConv

    rowptr, col = tessera.ops.generate_graph(a.spec, False)
    n = rowptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
    edge_index = torch.stack([col, dst])  # PyG: [sources; targets]
    torch.manual_seed(0)
    x = torch.randn(n, a.width)
    gy = torch.randn(n, a.width)
    ours = GCNConv(a.width, a.width, cached=True)
    peer = ref.RefGCNConv(a.width, a.width, cached=True)
    peer.load_state_dict(ours.state_dict())
    print(f"graph {a.spec}: {n} nodes, {edge_index.size(1)} edges; width {a.width}; threads {a.threads}; "
          f"transparent huge pages: {bc.transparent_hugepage()}")

    results = {}
    for name, conv in (("tessera", ours), ("pyg_semantics_torch", peer)):
        results[name] = bc.time_layer_cpu(name, conv, x, edge_index, gy, a.reps)
    # The aggregation alone (the part tessera replaces; the dense transform lin(x) is torch's matmul
    # in both layers, and with a generic BLAS it dominates the whole layer).
    g = ours._cached_graph
    ei_n, w_n = peer._cache
    h = torch.randn(n, a.width)
    with torch.no_grad():
        agg_ours = bc.median_ms_cpu(lambda: g.spmm(h), reps=a.reps)
        agg_peer = bc.median_ms_cpu(lambda: ref.propagate(h, ei_n, w_n), reps=a.reps)
        lin_ms = bc.median_ms_cpu(lambda: ours.lin(h), reps=a.reps)
    results["aggregation_only"] = {"tessera_ms": agg_ours, "pyg_semantics_torch_ms": agg_peer,
                                   "speedup": agg_peer / agg_ours, "dense_transform_ms": lin_ms}
    print(f"  aggregation only: tessera {agg_ours:.1f} ms, peer {agg_peer:.1f} ms ({agg_peer / agg_ours:.1f}x); "
          f"dense transform lin(x) {lin_ms:.1f} ms (shared by both)")
    diff = (results["tessera"].pop("out") - results["pyg_semantics_torch"].pop("out")).abs().max().item()
    ratios = {k: results["pyg_semantics_torch"][k] / results["tessera"][k] for k in ("forward_ms", "forward_backward_ms")}
    print(f"  speedup: forward {ratios['forward_ms']:.1f}x, forward+backward {ratios['forward_backward_ms']:.1f}x; "
          f"max |difference| {diff:.2e}")
    record = bc.provenance(f"cpu: {bc.cpu_model()}")
    record.update({"benchmark": "gcn_cpu", "graph": a.spec, "nodes": n, "edges": int(edge_index.size(1)),
                   "width": a.width, "threads": a.threads, "reps": a.reps, "cached": True,
                   "results": results, "speedup": ratios, "max_abs_difference": diff})
    out = a.out or os.path.join(bc.ROOT, "bench", "results",
                                f"gcn_cpu_{datetime.datetime.now().strftime('%Y%m%d_%H%M%S')}.json")
    bc.write_json(out, record)


if __name__ == "__main__":
    main()
