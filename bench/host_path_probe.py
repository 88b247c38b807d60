#!/usr/bin/env python3
"""What one call costs the host, per piece of an attention layer's CUDA forward without autograd.

On Cora and PubMed a layer's forward is its host path (attention_profile.py --timeline: the GPU
idles between kernels), so the ratios against PyG there follow the host's time per op. This times
each piece alone on tiny inputs (kernels of a few microseconds, so the GPU keeps up and the wall
time per call is the host's): torch's own ops for scale, tessera's linear (with and without a kept
weight split) and attention ops, and the whole layers on the given graph (kernels included) with
the prepared projections off and on (tessera.nn._linear._PREPARED), the Transformer also with its
forward as one op off and on (tessera.nn.transformer._ONE_OP).

    python3 bench/host_path_probe.py [--graph cora] [--data-dir DIR] [--calls 1000]
"""
import argparse
import sys
import time

import torch

import bench_common as bc


def host_us(fn, calls: int) -> float:
    """Median over 5 rounds of the wall time per call, `calls` calls back to back, then one sync."""
    rounds = []
    for _ in range(6):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - t) / calls * 1e6)
    return sorted(rounds[1:])[2]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", default="cora")
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    p.add_argument("--calls", type=int, default=1000)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("host_path_probe.py needs a CUDA device")
    bc.import_tessera()
    import tessera.nn as tnn
    from tessera.nn import _linear
    ops = torch.ops.tessera
    n = a.calls
    x = torch.randn(64, 128, device="cuda")
    w = torch.randn(256, 128, device="cuda")
    b = torch.randn(256, device="cuda")
    split = ops.linear_split_weight(w, None)
    rowptr = torch.arange(0, 65, device="cuda", dtype=torch.int64)
    col = torch.arange(64, device="cuda", dtype=torch.int64)
    q = torch.randn(64, 256, device="cuda")

    def row(name, fn):
        with torch.no_grad():
            us = host_us(fn, n)
        print(f"  {name:<58} {us:8.1f} us", flush=True)

    print(f"host time per call ({torch.cuda.get_device_name()}, {bc.cpu_model()}; {n} calls back to back)")
    row("torch.empty [64, 256]", lambda: torch.empty(64, 256, device="cuda"))
    row("torch add [64, 128]", lambda: x + x)
    row("torch linear 64x128 -> 256 (cuBLAS)", lambda: torch.nn.functional.linear(x, w, b))
    row("tessera.linear 64x128 -> 256 (split each call)", lambda: ops.linear(x, w, b))
    row("tessera.linear 64x128 -> 256 (kept split)", lambda: ops.linear(x, w, b, None, split))
    args = (None, 4, "transformer", 0.2, 0.125, 0.0, 0, False, False, None, None, None, False, 0, None, None, None)
    row("tessera.attention 64 nodes, 4x64, anonymous graph", lambda: ops.attention(rowptr, col, q, q, q, *args))
    # With a graph id, as a layer calls it: the walk's schedule is kept, not built on every call.
    from tessera.nn.gatv2 import AttentionGraph
    g = AttentionGraph.from_edge_index(torch.stack([col, col]), 64, 64)
    kept = args[:-4] + (g.graph.id,) + args[-3:]
    row("tessera.attention 64 nodes, 4x64, a graph's id", lambda: ops.attention(g.rowptr, g.col, q, q, q, *kept))
    _, rp, cl = bc.require_graph(a.graph, a.data_dir, "host_path_probe.py")
    ei = bc.edge_index_of(rp, cl, "cuda")
    xg = torch.randn(rp.numel() - 1, 128, device="cuda")
    from tessera.nn import transformer
    for layer in ("TransformerConv", "GATv2Conv"):
        conv = getattr(tnn, layer)(128, 64, heads=4).to("cuda").eval()
        for one_op in ((False, True) if layer == "TransformerConv" else (False,)):
            transformer._ONE_OP = one_op
            for prepared in (False, True):
                _linear._PREPARED = prepared
                how = f"prepared {'on' if prepared else 'off'}" + (f", one op {'on' if one_op else 'off'}"
                                                                  if layer == "TransformerConv" else "")
                row(f"{layer} 4x64 on {a.graph} ({how})", lambda: conv(xg, ei))


if __name__ == "__main__":
    main()
