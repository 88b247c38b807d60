#!/usr/bin/env python3
"""GATv2Conv / TransformerConv layers on the GPU: tessera.nn vs torch_geometric.nn with the same
weights (PyG's state_dict loaded into tessera's layer), same graph, same run, fp32 (or --dtype).

Per graph, (H, C) and layer: forward and forward+backward (w.r.t. x and every parameter; CUDA
events, median of at least --reps calls and of 200 ms of them), peak memory above the inputs
(max_memory_allocated delta during forward+backward),
the maximum output difference, and the ratios against the issue's targets (GATv2 forward >= 10x,
forward+backward >= 5x, memory <= 1/15; TransformerConv >= 8x, >= 4x, <= 1/10).

    python3 bench/attention_layer_bench.py --json OUT.json [--graphs rmat,grid,clustered,cora,pubmed]
                                         [--hc 4x64,8x128,2x256] [--width 128] [--reps 5] [--budget-s 180]
                                         [--edge-dim D] [--dtype f32|f16|bf16] [--no-pyg] [--data-dir DIR]
The graphs are the GCN slice's (bench_common.load_graph): R-MAT, grid and clustered generated, Cora
and PubMed read from --data-dir (skipped with a message when absent); x is random of --width columns.
At the end, per layer, the medians of the ratios over the rows both sides completed.
The issue's targets are for fp32; --dtype f16/bf16 runs both layers and inputs in that type (tessera's
16-bit kernels accumulate in fp32), --no-pyg times tessera alone (A/B runs of tessera builds).
The output gradient of forward+backward is made once per configuration, outside the timed region and
before the peak-memory baseline (as in gcn_bench.py), for both sides.
With --edge-dim D both layers take edge_dim = D and the same random edge features: tessera projects
them inside its kernels, PyG builds lin_edge(edge_attr) as an E x H x C tensor.
The whole run is bounded by --budget-s: configurations not started within it are listed as skipped.
A configuration that runs out of GPU memory (PyG's E x H x C tensors at the large sizes) is recorded
as "oom" for that side. Without torch_geometric only tessera is timed.
"""
import argparse
import gc
import os
import statistics
import time

import torch

import bench_common as bc

TARGETS = {"gatv2": {"forward": 10.0, "forward_backward": 5.0, "memory": 1 / 15},
           "transformer": {"forward": 8.0, "forward_backward": 4.0, "memory": 1 / 10}}
PYG_NAMES = {"gatv2": "GATv2Conv", "transformer": "TransformerConv"}
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def measure(conv, x, edge_index, reps, edge_attr=None):
    """(forward ms, forward+backward ms, peak bytes above the inputs) or raises torch OOM."""
    extra = () if edge_attr is None else (edge_attr,)
    with torch.no_grad():
        fwd = bc.median_ms_cuda(lambda: conv(x, edge_index, *extra), warmup=1, reps=reps, min_ms=bc.LAYER_MIN_MS)
        gy = torch.ones_like(conv(x, edge_index, *extra))
    xg = x.detach().clone().requires_grad_()

    def fwd_bwd():
        conv.zero_grad(set_to_none=True)
        xg.grad = None
        conv(xg, edge_index, *extra).backward(gy)

    fb = bc.median_ms_cuda(fwd_bwd, warmup=1, reps=reps, min_ms=bc.LAYER_MIN_MS)
    conv.zero_grad(set_to_none=True)
    xg.grad = None
    if hasattr(conv, "_graph_cache"):  # tessera keeps the CSR of a reused edge_index: count it in the peak
        conv._graph_cache = type(conv._graph_cache)()
    gc.collect()
    peak = bc.peak_bytes_cuda(fwd_bwd)
    conv.zero_grad(set_to_none=True)
    return fwd, fb, peak


def timed(conv, x, edge_index, reps, edge_attr=None):
    try:
        f, fb, peak = measure(conv, x, edge_index, reps, edge_attr)
        return {"forward_ms": f, "forward_backward_ms": fb, "peak_bytes": peak}
    except torch.cuda.OutOfMemoryError as e:
        return {"oom": str(e).splitlines()[0]}
    finally:
        gc.collect()
        torch.cuda.empty_cache()


def medians(rows):
    """Per layer, the medians of the ratios over the rows where both sides completed (PyG's OOM rows
    have no ratio and are left out)."""
    out = {}
    for layer in TARGETS:
        rs = [r["ratio"] for r in rows if r["layer"] == layer and "ratio" in r]
        if rs:
            out[layer] = {k: statistics.median(r[k] for r in rs) for k in ("forward", "forward_backward", "memory")}
            out[layer]["rows"] = len(rs)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default=None, help="output path (default bench/results/attention_gpu_<date>.json)")
    p.add_argument("--graphs", default=bc.BENCH_GRAPHS)
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    p.add_argument("--hc", default="4x64,8x128,2x256")
    p.add_argument("--layers", default="gatv2,transformer")
    p.add_argument("--width", type=int, default=128, help="input feature width")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--budget-s", type=float, default=180.0)
    p.add_argument("--edge-dim", type=int, default=0, help="edge feature width (0: none)")
    p.add_argument("--dtype", default="f32", choices=sorted(DTYPES), help="layers' and inputs' type")
    p.add_argument("--no-pyg", action="store_true", help="time tessera alone")
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("attention_layer_bench: no CUDA device (bench/attention_cpu_bench.py is the CPU benchmark)")
    t_start = time.monotonic()
    bc.import_tessera()
    import tessera.nn as tnn
    pnn, pyg_version = (None, None) if a.no_pyg else bc.import_pyg_nn()
    dtype = DTYPES[a.dtype]
    dev = torch.device("cuda")
    record = bc.provenance(torch.cuda.get_device_name(0))
    record.update({"benchmark": "attention_gpu_vs_pyg", "pyg": pyg_version, "width": a.width, "reps": a.reps,
                   "budget_s": a.budget_s, "edge_dim": a.edge_dim, "dtype": a.dtype, "targets": TARGETS, "rows": [], "skipped": []})
    out_path = a.json or os.path.join(bc.ROOT, "bench", "results",
                                      f"attention_gpu_{time.strftime('%Y%m%d_%H%M%S')}.json")
    hcs = [tuple(int(v) for v in item.split("x")) for item in a.hc.split(",")]
    for gname, spec, rowptr, col, edge_index in bc.bench_graphs(a.graphs.split(","), a.data_dir, dev,
                                                                record["skipped"]):
        n = rowptr.numel() - 1
        print(f"{gname}: {spec}: {n} nodes, {edge_index.size(1)} edges", flush=True)
        torch.manual_seed(0)
        x = torch.randn(n, a.width, device=dev, dtype=dtype)
        ea = torch.randn(edge_index.size(1), a.edge_dim, device=dev, dtype=dtype) if a.edge_dim else None
        extra = () if ea is None else (ea,)
        kw = {"edge_dim": a.edge_dim} if a.edge_dim else {}
        for H, C in hcs:
            for layer in a.layers.split(","):
                cfg = {"graph": gname, "spec": spec, "nodes": n, "edges": int(edge_index.size(1)),
                       "layer": layer, "heads": H, "channels": C}
                if time.monotonic() - t_start > a.budget_s:
                    record["skipped"].append(cfg)
                    print(f"  {layer} H={H} C={C}: skipped (time budget)", flush=True)
                    continue
                ours = getattr(tnn, PYG_NAMES[layer])(a.width, C, heads=H, **kw).to(dev, dtype)
                row = dict(cfg)
                diff = None
                if pnn is not None:
                    peer = getattr(pnn, PYG_NAMES[layer])(a.width, C, heads=H, **kw).to(dev, dtype)
                    ours.load_state_dict(peer.state_dict())  # PyG's weights, unchanged
                    row["pyg"] = timed(peer, x, edge_index, a.reps, ea)
                    try:
                        with torch.no_grad():
                            diff = (ours(x, edge_index, *extra) - peer(x, edge_index, *extra)).abs().max().item()
                    except torch.cuda.OutOfMemoryError:
                        diff = None
                    del peer
                    gc.collect()
                    torch.cuda.empty_cache()
                row["tessera"] = timed(ours, x, edge_index, a.reps, ea)
                row["max_abs_difference"] = diff
                t, q = row["tessera"], row.get("pyg", {})
                if "forward_ms" in t and "forward_ms" in q:
                    ratio = {"forward": q["forward_ms"] / t["forward_ms"],
                             "forward_backward": q["forward_backward_ms"] / t["forward_backward_ms"],
                             "memory": t["peak_bytes"] / max(q["peak_bytes"], 1)}
                    tg = TARGETS[layer]
                    row["ratio"] = ratio
                    row["meets_target"] = {"forward": ratio["forward"] >= tg["forward"],
                                           "forward_backward": ratio["forward_backward"] >= tg["forward_backward"],
                                           "memory": ratio["memory"] <= tg["memory"]}
                record["rows"].append(row)
                del ours
                gc.collect()
                torch.cuda.empty_cache()

                def fmt(r):
                    if "oom" in r:
                        return "OOM"
                    return (f"fwd {r['forward_ms']:8.2f} ms fwd+bwd {r['forward_backward_ms']:8.2f} ms "
                            f"peak {r['peak_bytes'] / 2**20:9.1f} MiB")
                line = f"  {layer:11s} H={H} C={C:3d}: tessera {fmt(t)}"
                if q:
                    line += f" | PyG {fmt(q)}"
                if "ratio" in row:
                    r = row["ratio"]
                    line += f" | x{r['forward']:.1f} x{r['forward_backward']:.1f} mem {r['memory']:.3f}"
                if diff is not None:
                    line += f" | max diff {diff:.1e}"
                print(line, flush=True)
                bc.write_json(out_path, record)  # partial results survive a kill
        del x, edge_index, ea, extra
        gc.collect()
        torch.cuda.empty_cache()
    record["medians"] = medians(record["rows"])
    for layer, m in record["medians"].items():
        tg = TARGETS[layer]
        print(f"{layer} medians over {m['rows']} rows: forward x{m['forward']:.2f} (target {tg['forward']:g}), "
              f"fwd+bwd x{m['forward_backward']:.2f} (target {tg['forward_backward']:g}), "
              f"memory {m['memory']:.3f} (target {tg['memory']:.3f})", flush=True)
    record["wall_s"] = time.monotonic() - t_start
    bc.write_json(out_path, record)


if __name__ == "__main__":
    main()
