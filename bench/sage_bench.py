#!/usr/bin/env python3
"""SAGE on the GPU: tessera.nn.SAGEConv vs PyG's SAGEConv and torch's scatter_reduce, same graph,
weights and run. Per graph and width: aggregation forward (tessera segment_reduce vs PyG's
aggregation module vs torch scatter_reduce), layer forward, layer forward+backward (medians, CUDA
events) and peak memory of forward+backward (torch.cuda.max_memory_allocated).
Graphs as in the GCN slice: R-MAT 2^20 deg 16, grid 2^20, clustered 2^16 deg ~200.

    python3 bench/sage_bench.py [--graphs rmat,grid,clustered] [--widths 64,128,256,512] [--aggr max]
Writes bench/results/sage_gpu_<date>.json (or --json PATH). A peer that runs out of GPU memory
(PyG's forward+backward on R-MAT 2^20 needs ~90 GiB at width 256, so ~180 GiB at 512) is recorded
as null with its error; tessera's numbers are still measured.
"""
import argparse
import datetime
import os

import torch

import bench_common as bc

SPECS = {"rmat": "rmat:scale=20,degree=16,seed=1", "grid": "grid:rows=1024,cols=1024",
         "clustered": "clustered:nodes=65536,clusters=256,degree=200,p_in=0.9,seed=1"}


def peak_mib(fn):
    return bc.peak_bytes_cuda(fn) / 2**20


def guarded(rec, key, fn):
    """rec[key] = fn(), or None (and rec[key + '_error']) when fn runs out of GPU memory."""
    try:
        rec[key] = fn()
    except torch.cuda.OutOfMemoryError as e:
        rec[key] = None
        rec[key + "_error"] = "out of memory: " + str(e).splitlines()[0]
    torch.cuda.empty_cache()


def ratio(num, den):
    return num / den if num is not None and den else None


def fmt(v, spec):
    return format(v, spec) if v is not None else "OOM"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", default="rmat,grid,clustered")
    p.add_argument("--widths", default="64,128,256,512")
    p.add_argument("--aggr", default="max", choices=["max", "min", "sum", "mean"])
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--json", "--out", dest="out", default=None, help="output JSON path")
    a = p.parse_args()
    tessera = bc.import_tessera()
    from tessera.graph import Graph
    from tessera.nn import SAGEConv
    from tessera.nn.sage import segment_reduce
    from torch_geometric.nn import SAGEConv as PygSAGEConv
    dev = torch.device("cuda")
    red = {"max": "amax", "min": "amin", "sum": "sum", "mean": "mean"}[a.aggr]
    records = []
    for gname in a.graphs.split(","):
        rowptr, col = tessera.ops.generate_graph(SPECS[gname], False)
        n = rowptr.numel() - 1
        dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
        edge_index = torch.stack([col.long(), dst]).to(dev)
        graph = Graph.from_edge_index(edge_index, num_nodes=n)
        print(f"# {gname}: {n} nodes, {edge_index.size(1)} edges")
        for w in [int(s) for s in a.widths.split(",")]:
            torch.manual_seed(0)
            x = torch.randn(n, w, device=dev)
            gy = torch.randn(n, w, device=dev)
            ours = SAGEConv(w, w, aggr=a.aggr).to(dev)
            theirs = PygSAGEConv(w, w, aggr=a.aggr).to(dev)
            theirs.load_state_dict(ours.state_dict())
            idx = edge_index[1].view(-1, 1).expand(-1, w)
            rec = {"graph": gname, "nodes": n, "edges": int(edge_index.size(1)), "width": w, "aggr": a.aggr}
            with torch.no_grad():
                guarded(rec, "diff_vs_pyg", lambda: (ours(x, graph) - theirs(x, edge_index)).abs().max().item())
                rec["agg_tessera_ms"] = bc.median_ms_cuda(lambda: segment_reduce(graph, x, a.aggr), reps=a.reps)
                guarded(rec, "agg_pyg_ms", lambda: bc.median_ms_cuda(
                    lambda: theirs.aggr_module(x.index_select(0, edge_index[0]), edge_index[1], dim_size=n),
                    reps=a.reps))
                guarded(rec, "agg_scatter_reduce_ms", lambda: bc.median_ms_cuda(
                    lambda: torch.zeros_like(x).scatter_reduce(0, idx, x.index_select(0, edge_index[0]), reduce=red,
                                                               include_self=False), reps=a.reps))
                rec["fwd_tessera_ms"] = bc.median_ms_cuda(lambda: ours(x, graph), reps=a.reps)
                guarded(rec, "fwd_pyg_ms", lambda: bc.median_ms_cuda(lambda: theirs(x, edge_index), reps=a.reps))
            xg = x.clone().requires_grad_()
            for name, conv, g in (("tessera", ours, graph), ("pyg", theirs, edge_index)):
                def fb(conv=conv, g=g):
                    conv.zero_grad(set_to_none=True)
                    xg.grad = None
                    conv(xg, g).backward(gy)
                guarded(rec, f"fwd_bwd_{name}_ms", lambda: bc.median_ms_cuda(fb, reps=a.reps))
                guarded(rec, f"peak_fwd_bwd_{name}_mib", lambda: peak_mib(fb))
            rec["agg_speedup_vs_pyg"] = ratio(rec["agg_pyg_ms"], rec["agg_tessera_ms"])
            rec["fwd_bwd_speedup_vs_pyg"] = ratio(rec["fwd_bwd_pyg_ms"], rec["fwd_bwd_tessera_ms"])
            rec["peak_ratio"] = ratio(rec["peak_fwd_bwd_tessera_mib"], rec["peak_fwd_bwd_pyg_mib"])
            print(f"  F={w:4d} agg {rec['agg_tessera_ms']:.3f} ms (PyG {fmt(rec['agg_pyg_ms'], '.3f')}, scatter_reduce "
                  f"{fmt(rec['agg_scatter_reduce_ms'], '.3f')}) -> {fmt(rec['agg_speedup_vs_pyg'], '.1f')}x; layer fwd "
                  f"{rec['fwd_tessera_ms']:.2f} vs {fmt(rec['fwd_pyg_ms'], '.2f')} ms; fwd+bwd "
                  f"{fmt(rec['fwd_bwd_tessera_ms'], '.2f')} vs {fmt(rec['fwd_bwd_pyg_ms'], '.2f')} ms -> "
                  f"{fmt(rec['fwd_bwd_speedup_vs_pyg'], '.1f')}x; peak {fmt(rec['peak_fwd_bwd_tessera_mib'], '.0f')} vs "
                  f"{fmt(rec['peak_fwd_bwd_pyg_mib'], '.0f')} MiB; max diff {fmt(rec['diff_vs_pyg'], '.1e')}", flush=True)
            records.append(rec)
    record = bc.provenance(torch.cuda.get_device_name())
    record.update({"benchmark": "sage_gpu", "results": records})
    out = a.out or os.path.join(bc.ROOT, "bench", "results",
                                f"sage_gpu_{datetime.datetime.now().strftime('%Y%m%d_%H%M%S')}.json")
    bc.write_json(out, record)


if __name__ == "__main__":
    main()
