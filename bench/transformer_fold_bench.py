#!/usr/bin/env python3
"""tessera.nn.TransformerConv folded against unfolded (TransformerConv._folded_attention): the same
layer, weights, graph and inputs, the two forms alternated in one run (TESSERA_TRANSFORMER_FOLD's
switch, transformer._FOLD), on the CPU or on CUDA.

    python3 bench/transformer_fold_bench.py [--device cpu|cuda] [--graphs "rmat:scale=16,degree=16,seed=1;cora"]
                                            [--hc 2x256,8x128,4x64] [--width 128] [--rounds 2] [--reps 3]
                                            [--threads 2] [--data-dir DIR] [--json OUT.json]

Per graph and (H, C): forward and forward+backward (w.r.t. x and every parameter) times, the
lowest median over --rounds alternations of the two forms (CPU: wall clock; CUDA: CUDA events),
peak memory above the inputs (CPU: resident-set growth; CUDA: allocated bytes), and the largest
difference between the two forms' outputs relative to the output's largest value. The
output gradient is made once per configuration, before any timing.
Graph names as bench_common.load_graph takes them: rmat, grid, clustered (the GPU benchmarks'
2^20-node graphs), cora and pubmed (from --data-dir), or a generator spec; separated by ',' or, when
a generator spec (which holds commas) is among them, by ';'.
"""
import argparse
import sys

import torch

import bench_common as bc


def measure(conv, x, edge_index, grad_out, device, reps):
    """(forward ms, forward+backward ms, peak MiB) of one form."""
    xg = x.detach().clone().requires_grad_()

    def forward():
        with torch.no_grad():
            conv(x, edge_index)

    def fwd_bwd():
        conv.zero_grad(set_to_none=True)
        xg.grad = None
        conv(xg, edge_index).backward(grad_out)

    if device == "cuda":
        fwd = bc.median_ms_cuda(forward, warmup=1, reps=reps, min_ms=bc.LAYER_MIN_MS)
        fb = bc.median_ms_cuda(fwd_bwd, warmup=1, reps=reps, min_ms=bc.LAYER_MIN_MS)
        peak = bc.peak_bytes_cuda(fwd_bwd) / 2 ** 20
    else:
        fwd = bc.median_ms_cpu(forward, reps=reps)
        fb = bc.median_ms_cpu(fwd_bwd, reps=reps)
        peak = bc.peak_rss_growth_mib(fwd_bwd)
    conv.zero_grad(set_to_none=True)
    return fwd, fb, peak


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--graphs", default="rmat:scale=16,degree=16,seed=1")
    p.add_argument("--hc", default="2x256,8x128,4x64")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    if a.device == "cpu":
        torch.set_num_threads(a.threads)
    elif not torch.cuda.is_available():
        sys.exit("transformer_fold_bench: --device cuda but torch sees no GPU")
    bc.import_tessera()
    import tessera.nn.transformer as transformer
    from tessera.nn import TransformerConv

    rows = []
    # Generator specs hold commas: with one of them in the list, graphs are separated by ';'.
    names = filter(None, a.graphs.split(";" if ":" in a.graphs else ","))
    for name, spec, rowptr, col, edge_index in bc.bench_graphs(names, a.data_dir, a.device):
        n = rowptr.numel() - 1
        torch.manual_seed(0)
        x = torch.randn(n, a.width, device=a.device)
        print(f"{name}: {n} nodes, {col.numel()} edges, width {a.width}, {a.device}", flush=True)
        for hc in a.hc.split(","):
            heads, channels = (int(v) for v in hc.split("x"))
            torch.manual_seed(1)
            conv = TransformerConv(a.width, channels, heads=heads).to(a.device)
            with torch.no_grad():
                outs = {}
                for form in ("0", "1"):
                    transformer._FOLD = form
                    outs[form] = conv(x, edge_index)
                grad_out = torch.randn_like(outs["0"])
            diff = float((outs["1"] - outs["0"]).abs().max() / outs["0"].abs().max())
            del outs
            best = {}
            for _ in range(a.rounds):
                for form in ("0", "1"):
                    transformer._FOLD = form
                    r = measure(conv, x, edge_index, grad_out, a.device, a.reps)
                    old = best.get(form)
                    best[form] = r if old is None else tuple(
                        min(u, v) if u is not None and v is not None else u for u, v in zip(old, r))
            u, f = best["0"], best["1"]
            row = {"graph": name, "spec": spec, "nodes": n, "edges": int(col.numel()), "heads": heads,
                   "channels": channels, "width": a.width, "max_relative_difference": diff,
                   "unfolded": dict(zip(("forward_ms", "forward_backward_ms", "peak_mib"), u)),
                   "folded": dict(zip(("forward_ms", "forward_backward_ms", "peak_mib"), f))}
            rows.append(row)
            mem = "" if u[2] is None or f[2] is None else f"  peak {u[2]:8.1f} -> {f[2]:8.1f} MiB"
            print(f"  {hc:6s} forward {u[0]:9.2f} -> {f[0]:9.2f} ms (x{u[0] / f[0]:.2f})  "
                  f"fwd+bwd {u[1]:9.2f} -> {f[1]:9.2f} ms (x{u[1] / f[1]:.2f}){mem}  diff {diff:.1e}", flush=True)
    if a.json:
        device = torch.cuda.get_device_name() if a.device == "cuda" else bc.cpu_model()
        record = bc.provenance(device)
        record.update({"benchmark": "transformer_fold", "threads": a.threads if a.device == "cpu" else None,
                       "rounds": a.rounds, "reps": a.reps, "rows": rows})
        bc.write_json(a.json, record)


if __name__ == "__main__":
    main()
