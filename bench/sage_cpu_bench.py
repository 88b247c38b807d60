#!/usr/bin/env python3
"""SAGEConv layer on the CPU: tessera.nn.SAGEConv vs PyG's semantics in plain torch (index_select +
scatter_reduce, what PyG's SAGEConv computes), same threads, graph and weights, timed in the same
run. Forward and forward+backward (w.r.t. x and the weights), medians. Default: R-MAT 2^16 nodes
with ~1M edges, width 128, aggr max, 2 threads (issue 4's CPU benchmark).

    python3 bench/sage_cpu_bench.py [--spec rmat:scale=16,degree=16,seed=1] [--width 128] [--aggr max]
Writes bench/results/sage_cpu_<date>.json (or --json PATH).
"""
import argparse
import datetime
import os
import time

import torch

import bench_common as bc


class PygSemanticsSAGE(torch.nn.Module):
    """PyG SAGEConv (root_weight, no project/normalize) written with plain torch ops."""

    def __init__(self, cin, cout, aggr):
        super().__init__()
        self.aggr = {"max": "amax", "min": "amin", "sum": "sum", "mean": "mean"}[aggr]
        self.lin_l = torch.nn.Linear(cin, cout, bias=True)
        self.lin_r = torch.nn.Linear(cin, cout, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        idx = dst.view(-1, 1).expand(-1, x.size(1))
        agg = torch.zeros_like(x).scatter_reduce(0, idx, x.index_select(0, src), reduce=self.aggr,
                                                 include_self=False)
        return self.lin_l(agg) + self.lin_r(x)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default="rmat:scale=16,degree=16,seed=1")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--aggr", default="max", choices=["max", "min", "sum", "mean"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--json", "--out", dest="out", default=None, help="output JSON path")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    tessera = bc.import_tessera()
    from tessera.graph import Graph
    from tessera.nn import SAGEConv

    rowptr, col = tessera.ops.generate_graph(a.spec, False)
    n = rowptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
    edge_index = torch.stack([col.long(), dst])  # PyG: [sources; targets]
    graph = Graph.from_edge_index(edge_index, num_nodes=n)  # built once, like PyG's cached adjacency
    torch.manual_seed(0)
    x = torch.randn(n, a.width)  # tie-free
    gy = torch.randn(n, a.width)
    ours = SAGEConv(a.width, a.width, aggr=a.aggr)
    peer = PygSemanticsSAGE(a.width, a.width, a.aggr)
    peer.load_state_dict(ours.state_dict())
    print(f"graph {a.spec}: {n} nodes, {edge_index.size(1)} edges; width {a.width}; aggr {a.aggr}; "
          f"threads {a.threads}; transparent huge pages: {bc.transparent_hugepage()}")

    results = {}
    for name, conv, g in (("tessera", ours, graph), ("pyg_semantics_torch", peer, edge_index)):
        results[name] = bc.time_layer_cpu(name, conv, x, g, gy, a.reps)
    diff = (results["tessera"].pop("out") - results["pyg_semantics_torch"].pop("out")).abs().max().item()
    ratios = {k: results["pyg_semantics_torch"][k] / results["tessera"][k] for k in ("forward_ms", "forward_backward_ms")}
    print(f"  speedup: forward {ratios['forward_ms']:.1f}x, forward+backward {ratios['forward_backward_ms']:.1f}x; "
          f"max |difference| {diff:.2e}")
    # The dense part both layers share (torch's Linear: lin_l on the aggregate, lin_r on x), timed
    # alone in the same run: the peer's time over it bounds the speedup any aggregation can give.
    h = torch.randn(n, a.width)
    xg = x.clone().requires_grad_()

    def dense_fwd_bwd():
        ours.zero_grad(set_to_none=True)
        xg.grad = None
        (ours.lin_l(h) + ours.lin_r(xg)).backward(gy)

    with torch.no_grad():
        dense_fwd = bc.median_ms_cpu(lambda: ours.lin_l(h) + ours.lin_r(x), reps=a.reps)
        agg_ours = bc.median_ms_cpu(lambda: tessera.nn.sage.segment_reduce(graph, x, a.aggr)[0], reps=a.reps)
    dense_fb = bc.median_ms_cpu(dense_fwd_bwd, reps=a.reps)
    peer_res = results["pyg_semantics_torch"]
    dense = {"forward_ms": dense_fwd, "forward_backward_ms": dense_fb, "tessera_aggregation_ms": agg_ours,
             "speedup_ceiling": {"forward_ms": peer_res["forward_ms"] / dense_fwd,
                                 "forward_backward_ms": peer_res["forward_backward_ms"] / dense_fb}}
    print(f"  dense transforms alone (shared): forward {dense_fwd:.1f} ms, forward+backward {dense_fb:.1f} ms -> "
          f"speedup ceiling with a free aggregation: {dense['speedup_ceiling']['forward_ms']:.1f}x / "
          f"{dense['speedup_ceiling']['forward_backward_ms']:.1f}x; tessera aggregation alone {agg_ours:.1f} ms")
    record = bc.provenance(f"cpu: {bc.cpu_model()}")
    record.update({"benchmark": "sage_cpu", "graph": a.spec, "nodes": n, "edges": int(edge_index.size(1)),
                   "width": a.width, "aggr": a.aggr, "threads": a.threads, "reps": a.reps,
                   "results": results, "speedup": ratios, "shared_dense_part": dense,
                   "max_abs_difference": diff})
    out = a.out or os.path.join(bc.ROOT, "bench", "results",
                                f"sage_cpu_{datetime.datetime.now().strftime('%Y%m%d_%H%M%S')}.json")
    bc.write_json(out, record)


if __name__ == "__main__":
    main()
