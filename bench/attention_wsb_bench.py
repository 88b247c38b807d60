#!/usr/bin/env python3
"""The tensor-core Graph Transformer forward (variant cuda.wsb) against the fused CSR kernel
(cuda.fused) and PyG's TransformerConv, in half precision on the GPU, same graphs, same run.

Per graph: the WSB statistics (16x8 block fill, distinct source rows gathered per window) and,
per (H, C) and dtype:
  * the attention op alone (q, k, v given), forward, both variants: median time, achieved bandwidth
    over the IO floor (q, out read/written once, k and v rows read once, lse and the CSR once), and
    the bytes the WSB kernel actually gathers (k and v rows once per window that holds them, plus
    column ids and bitmaps); the first cuda.wsb call separately (it builds and uploads the format);
    the error of each against the same op in float32;
  * the whole layer (tessera.nn.TransformerConv with each variant, and PyG's with the same weights),
    eval-mode forward, and tessera's forward+backward with each forward variant (the backward is
    the CSR kernel's either way, from the forward's lse).
The winner per case is what the tuner (TESSERA_TUNE=1) would keep; the 16x8 fill at which cuda.wsb
starts to win calibrates tune::predict_attention.

    python3 bench/attention_wsb_bench.py --json OUT.json [--graphs rmat,grid,clustered,...]
                                         [--hc 4x64,8x128,8x16] [--dtypes f16,bf16] [--budget-s 200]
"""
import argparse
import gc
import os
import time

import torch

import bench_common as bc

GRAPHS = {
    **bc.GENERATED_GRAPHS,
    "rmat_scrambled": "rmat:scale=20,degree=16,seed=1,scramble=1",  # ids without locality (16x8 fill 0.0079)
    "clustered_sparse": "clustered:nodes=262144,clusters=4096,degree=24,seed=1",
}
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
VAR = "TESSERA_VARIANT_ATTENTION"


def with_variant(name, fn):
    old = os.environ.get(VAR)
    os.environ[VAR] = name
    try:
        return fn()
    finally:
        if old is None:
            os.environ.pop(VAR, None)
        else:
            os.environ[VAR] = old


def op_forward(ops, g, q, k, v, H):
    out, lse, _ = ops.attention(g["rowptr"], g["col"], q, k, v, None, H, "transformer", 0.2, 0.0, 0.0, 0, False,
                                False, None, None, None, False, g["id"], None, None)
    return out


def wsb_stats(rowptr, col, n_src):
    """The WSB format's counts (include/tessera/format/wsb.hpp, WsbStats) from the CSR alone: windows of 16
    rows, each window's distinct sources packed into blocks of 8 slots, padded to an even count;
    cells = distinct (row, source) pairs; fill = cells / (blocks * 128)."""
    rows, nnz = rowptr.numel() - 1, col.numel()
    r = torch.repeat_interleave(torch.arange(rows, dtype=torch.long), (rowptr[1:] - rowptr[:-1]).long())
    c = col.long()
    windows = (rows + 15) // 16
    wc = torch.unique((r // 16) * n_src + c)
    distinct = torch.bincount(wc // n_src, minlength=windows)
    blocks_w = (distinct + 7) // 8
    blocks_w = blocks_w + blocks_w % 2
    blocks = int(blocks_w.sum())
    cells = int(torch.unique(r * n_src + c).numel())
    return {"rows": rows, "entries": nnz, "windows": windows, "blocks": blocks, "cells": cells,
            "distinct_cols": int(distinct.sum()), "fill": cells / max(blocks * 128, 1),
            "column_reuse": nnz / max(int(distinct.sum()), 1)}


def rel_err(x, ref):
    ref = ref.float()
    return ((x.float() - ref).abs().max() / ref.pow(2).mean().sqrt().clamp_min(1e-30)).item()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default=None, help="output path (default bench/results/attention_wsb_<date>.json)")
    p.add_argument("--graphs", default="rmat,grid,clustered,clustered_sparse")
    p.add_argument("--hc", default="4x64,8x128,8x16")
    p.add_argument("--dtypes", default="f16,bf16")
    p.add_argument("--width", type=int, default=128, help="input feature width of the layers")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--budget-s", type=float, default=200.0)
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("attention_wsb_bench: no CUDA device")
    t_start = time.monotonic()
    tessera = bc.import_tessera()
    import tessera.nn as tnn
    ops = torch.ops.tessera
    pnn, pyg_version = bc.import_pyg_nn()
    if pnn is None:
        print(f"PyG {pyg_version}: only tessera is timed")
    dev = torch.device("cuda")
    record = bc.provenance(torch.cuda.get_device_name(0))
    record.update({"benchmark": "attention_wsb_vs_csr_vs_pyg", "width": a.width, "reps": a.reps, "rows": [],
                   "graphs": {}, "skipped": []})
    out_path = a.json or os.path.join(bc.ROOT, "bench", "results", f"attention_wsb_{time.strftime('%Y%m%d_%H%M%S')}.json")
    hcs = [tuple(int(x) for x in s.split("x")) for s in a.hc.split(",")]
    ms = lambda fn: bc.median_ms_cuda(fn, warmup=2, reps=a.reps)
    for gname in a.graphs.split(","):
        spec = GRAPHS.get(gname, gname)
        rowptr, col = ops.generate_graph(spec, False)
        n, nnz = rowptr.numel() - 1, col.numel()
        t0 = time.perf_counter()
        stats = wsb_stats(rowptr, col, n)
        stats["build_ms"] = (time.perf_counter() - t0) * 1e3  # of these counts, not of the format
        record["graphs"][gname] = {"spec": spec, "nodes": n, "edges": nnz, "wsb": stats}
        print(f"{gname}: {spec}: {n} nodes, {nnz} edges; WSB fill {stats['fill']:.3f}, {stats['blocks']} blocks, "
              f"{stats['distinct_cols'] / max(stats['windows'], 1):.1f} distinct sources per window, "
              f"{stats['column_reuse']:.1f} entries per gathered row", flush=True)
        # One tessera.Graph for the op and tessera's layer (one WSB build, keyed by its id); PyG
        # takes the same edges as edge_index.
        tg = tessera.Graph(rowptr.to(dev), col.to(dev), None, n)
        g = {"rowptr": tg.rowptr, "col": tg.col, "id": tg.id}
        dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
        edge_index = torch.stack([col.long(), dst]).to(dev)
        for H, C in hcs:
            W = H * C
            for dname in a.dtypes.split(","):
                cfg = {"graph": gname, "heads": H, "channels": C, "dtype": dname}
                if time.monotonic() - t_start > a.budget_s:
                    record["skipped"].append(cfg)
                    print(f"  H={H} C={C} {dname}: skipped (time budget)", flush=True)
                    continue
                dt = DTYPES[dname]
                torch.manual_seed(0)
                q, k, v = (torch.randn(n, W, device=dev, dtype=dt) for _ in range(3))
                row = dict(cfg)
                with torch.no_grad():
                    ref = with_variant("cuda.fused", lambda: op_forward(ops, g, q.float(), k.float(), v.float(), H))
                    run = lambda: op_forward(ops, g, q, k, v, H)  # the variant comes from the environment
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    y_wsb = with_variant("cuda.wsb", run)
                    torch.cuda.synchronize()
                    first = (time.perf_counter() - t0) * 1e3
                    y_fused = with_variant("cuda.fused", run)
                    t_fused = with_variant("cuda.fused", lambda: ms(run))
                    t_wsb = with_variant("cuda.wsb", lambda: ms(run))
                esz = torch.finfo(dt).bits // 8
                floor = esz * (2 * n * W + 2 * n * W) + 4 * n * H + 4 * (n + 1 + nnz)
                gathered = esz * 2 * stats["distinct_cols"] * W + esz * 2 * n * W + 4 * n * H + \
                    stats["blocks"] * (8 * 4 + 16) + (stats["blocks"] * 128 * 2 if stats["cells"] < stats["entries"] else 0)
                row["op"] = {"fused_ms": t_fused, "wsb_ms": t_wsb, "wsb_first_call_ms": first,
                             "wsb_over_fused": t_fused / t_wsb, "io_floor_bytes": floor,
                             "fused_floor_gbs": floor / (t_fused * 1e6), "wsb_floor_gbs": floor / (t_wsb * 1e6),
                             "wsb_gathered_bytes": gathered, "wsb_gathered_gbs": gathered / (t_wsb * 1e6),
                             "fused_rel_err": rel_err(y_fused, ref), "wsb_rel_err": rel_err(y_wsb, ref),
                             "winner": "cuda.wsb" if t_wsb < t_fused else "cuda.fused"}
                del q, k, v, ref, y_fused, y_wsb
                # The layers: tessera with each variant, PyG with the same weights.
                x = torch.randn(n, a.width, device=dev, dtype=dt)
                ours = tnn.TransformerConv(a.width, C, heads=H).to(dev, dt).eval()
                lay = {}
                peer = None
                if pnn is not None:
                    peer = pnn.TransformerConv(a.width, C, heads=H).to(dev, dt).eval()
                    ours.load_state_dict(peer.state_dict())
                    try:
                        with torch.no_grad():
                            lay["pyg_forward_ms"] = ms(lambda: peer(x, edge_index))
                    except (torch.cuda.OutOfMemoryError, RuntimeError) as e:
                        lay["pyg_error"] = str(e).splitlines()[0]
                for var in ("cuda.fused", "cuda.wsb"):
                    with torch.no_grad():
                        lay[f"{var}_forward_ms"] = with_variant(var, lambda: ms(lambda: ours(x, tg)))
                    xg = x.detach().clone().requires_grad_()
                    gy = torch.ones(n, H * C, device=dev, dtype=dt)  # made once, outside the timing

                    def fwd_bwd():
                        ours.zero_grad(set_to_none=True)
                        xg.grad = None
                        ours(xg, tg).backward(gy)
                    ours.train()  # dropout 0: cuda.wsb stays eligible in training
                    lay[f"{var}_forward_backward_ms"] = with_variant(var, lambda: ms(fwd_bwd))
                    ours.eval()
                if "pyg_forward_ms" in lay:
                    lay["forward_ratio_vs_pyg"] = {v: lay["pyg_forward_ms"] / lay[f"{v}_forward_ms"]
                                                   for v in ("cuda.fused", "cuda.wsb")}
                row["layer"] = lay
                record["rows"].append(row)
                o = row["op"]
                line = (f"  H={H} C={C:3d} {dname:4s} op: fused {o['fused_ms']:7.3f} ms ({o['fused_floor_gbs']:6.0f} GB/s) "
                        f"wsb {o['wsb_ms']:7.3f} ms ({o['wsb_floor_gbs']:6.0f} GB/s floor, {o['wsb_gathered_gbs']:6.0f} "
                        f"gathered; first {o['wsb_first_call_ms']:.0f} ms) x{o['wsb_over_fused']:.2f} "
                        f"err {o['fused_rel_err']:.1e}/{o['wsb_rel_err']:.1e} | layer fwd fused "
                        f"{lay['cuda.fused_forward_ms']:.2f} wsb {lay['cuda.wsb_forward_ms']:.2f}")
                if "pyg_forward_ms" in lay:
                    r = lay["forward_ratio_vs_pyg"]
                    line += f" PyG {lay['pyg_forward_ms']:.2f} ms (x{r['cuda.fused']:.1f} / x{r['cuda.wsb']:.1f})"
                line += (f" | fwd+bwd fused {lay['cuda.fused_forward_backward_ms']:.2f} "
                         f"wsb {lay['cuda.wsb_forward_backward_ms']:.2f}")
                print(line, flush=True)
                bc.write_json(out_path, record)
                del ours, peer, x
                gc.collect()
                torch.cuda.empty_cache()
        del g, tg, edge_index
        gc.collect()
        torch.cuda.empty_cache()
    record["wall_s"] = time.monotonic() - t_start
    bc.write_json(out_path, record)


if __name__ == "__main__":
    main()
