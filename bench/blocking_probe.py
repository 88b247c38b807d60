#!/usr/bin/env python3
"""Whether a call's host path waits for the GPU: its wall time (no synchronization after it) with
the GPU idle, against the same with a ~2 ms GPU sleep queued just before it.

A call that only queues work returns as fast either way; one that waits for the GPU somewhere (a
synchronizing runtime or driver call, a device-to-host copy) returns after the sleep, so its busy
time is about 2 ms longer. On PubMed the Transformer's forward took 200 us per call back to back
against 127 us of GPU work and about 70 us of host path on Cora (bench/results/gpu_20261207b): a
wait inside the call would make host and GPU time add up instead of overlapping.

    python3 bench/blocking_probe.py [--graph pubmed] [--data-dir DIR]
"""
import argparse
import os
import statistics
import sys
import time

import torch

import bench_common as bc

SLEEP_CYCLES = 4_000_000  # about 2 ms at the H100's and H200's 1.98 GHz


def wall_us(fn, busy: bool, reps: int = 15) -> float:
    """Median wall time of one call, the GPU idle or busy with a queued sleep when it starts."""
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        if busy:
            torch.cuda._sleep(SLEEP_CYCLES)
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", default="pubmed")
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("blocking_probe.py needs a CUDA device")
    bc.import_tessera()
    import tessera.nn as tnn
    from tessera.nn.gatv2 import AttentionGraph
    ops = torch.ops.tessera
    spec, rp, cl = bc.require_graph(a.graph, a.data_dir, "blocking_probe.py")
    n = rp.numel() - 1
    ei = bc.edge_index_of(rp, cl, "cuda")
    g = AttentionGraph.from_edge_index(ei, n, n)
    x = torch.randn(n, 128, device="cuda")
    w, b = torch.randn(256, 128, device="cuda"), torch.randn(256, device="cuda")
    split = ops.linear_split_weight(w, None)
    w_small = torch.randn(256, 64, device="cuda")
    qkv = torch.randn(n, 768, device="cuda")
    q, k, v = qkv[:, :256], qkv[:, 256:512], qkv[:, 512:]
    x2h, w2h = torch.randn(n, 256, device="cuda"), torch.randn(512, 128, device="cuda")
    w2x, b2x = torch.randn(512, 128, device="cuda"), torch.randn(512, device="cuda")
    heads_split = ops.linear_split_weight(w2h, w2x)

    def set_variant(name):
        if name:
            os.environ["TESSERA_VARIANT_LINEAR"] = name
        else:
            os.environ.pop("TESSERA_VARIANT_LINEAR", None)

    def linear_with(variant, kept):
        def call():
            set_variant(variant)
            try:
                ops.linear(x, w, b, None, split if kept else None)
            finally:
                set_variant(None)
        return call

    layers = []
    for name, hc in (("TransformerConv", (4, 64)), ("TransformerConv", (2, 256)), ("GATv2Conv", (4, 64))):
        conv = getattr(tnn, name)(128, hc[1], heads=hc[0]).cuda()
        layers.append((f"{name} {hc[0]}x{hc[1]} forward, no autograd", lambda conv=conv: conv(x, ei)))
        if name == "TransformerConv":
            layers.append((f"{name} {hc[0]}x{hc[1]} forward, no autograd, repeats off",
                           repeats(False, lambda conv=conv: conv(x, ei))))

    cases = [
        ("torch add", lambda: x + x),
        ("torch linear (cuBLAS)", lambda: torch.nn.functional.linear(x, w, b)),
        ("tessera.linear default variant, kept split", linear_with(None, True)),
        ("tessera.linear default variant, split each call", linear_with(None, False)),
        ("tessera.linear cuda.wgmma.resident, kept split", linear_with("cuda.wgmma.resident", True)),
        ("tessera.linear cuda.wgmma.128x128, kept split", linear_with("cuda.wgmma.128x128", True)),
        ("tessera.linear cuda.tf32x3.128x128", linear_with("cuda.tf32x3.128x128", False)),
        ("tessera.linear K = 64 (tf32x3 or streaming wgmma)", lambda: ops.linear(x[:, :64], w_small, b)),
        ("tessera.attention 4x64, a graph's id", lambda: ops.attention(g.rowptr, g.col, q, k, v, None, 4, "transformer",
                                                                      scale=0.125, graph_id=g.graph.id)),
        ("tessera.linear_heads 2 heads 128 -> 256, x2, kept split",
         lambda: ops.linear_heads(x2h, w2h, None, x, w2x, b2x, heads_split)),
    ] + layers
    cases += folded_pieces(x, ei, g, tnn) + unfolded_op(x, ei, tnn)
    print(f"wall time of one call, us: GPU idle / GPU busy with a queued sleep ({torch.cuda.get_device_name()}, "
          f"{bc.cpu_model()}; {spec}, {n} nodes, input width 128)")
    with torch.no_grad():
        for name, fn in cases:
            for _ in range(3):
                fn()
            idle, busy = wall_us(fn, False), wall_us(fn, True)
            verdict = "WAITS for the GPU" if busy > idle + 500 else "queues only"
            print(f"  {name:<60} {idle:8.1f} / {busy:8.1f}  {verdict}", flush=True)


def folded_pieces(x, ei, g, tnn) -> list:
    """The folded TransformerConv 2x256 forward (no autograd: tessera.transformer_inference) taken
    apart: the layer with the one op off (its Python path), the layer with the op replaced by a
    stand-in (the layer's Python alone), the op alone on the layer's kept weights, and each of the
    op's three products and attention alone. On a graph the layer does not fold on without autograd
    (fewer entries than FOLD_CUDA_INFERENCE_MIN_ENTRIES: Cora), the unfolded form's layer pieces
    alone."""
    import tessera.nn.transformer as transformer
    ops = torch.ops.tessera
    conv = tnn.TransformerConv(128, 256, heads=2).cuda()
    op_args = one_op_args(conv, x, ei)
    w_in, b_in, split_in, w_skip, b_skip, split_skip, w_value, b_value, b_out, split_value = op_args[7:17]
    folded = w_value is not None  # the folded form's last product applies lin_value

    def python_path():
        transformer._ONE_OP = False
        try:
            conv(x, ei)
        finally:
            transformer._ONE_OP = True

    def python_alone():
        real = transformer._ops
        class StandIn:  # the op's name resolved on the stand-in, every other op on torch.ops.tessera
            def __getattr__(self, name):
                return (lambda *a: a[1]) if name == "transformer_inference" else getattr(real, name)
        transformer._ops = StandIn()
        try:
            conv(x, ei)
        finally:
            transformer._ops = real

    pre = "folded TransformerConv 2x256: " if folded else "TransformerConv 2x256 (not folded here): "
    pieces = [(pre + "the layer", lambda: conv(x, ei)),
              (pre + "the layer, one op off", python_path),
              (pre + "the layer's Python, op stood in (a repeat)", python_alone),
              (pre + "the same, the whole forward (repeats off)", repeats(False, python_alone)),
              (pre + "tessera.transformer_inference alone", lambda: ops.transformer_inference(*op_args)),
              (pre + "the same, grad mode on", in_grad_mode(op_args))]
    if not folded:
        return pieces
    query = ops.linear(x, w_in, b_in, None, split_in)
    agg = torch.randn(x.size(0), 256, device="cuda")
    return pieces + [(pre + "its query product", lambda: ops.linear(x, w_in, b_in, None, split_in)),
                     (pre + "its attention (multi-query)",
                      lambda: ops.attention(g.rowptr, g.col, query, x, x, None, 2, "transformer", scale=1 / 16,
                                            graph_id=g.graph.id)),
                     (pre + "its heads product with the skip",
                      lambda: ops.linear_heads(agg, w_value, b_out, x, w_skip, None, split_value))]


def repeats(on: bool, fn):
    """fn with TransformerConv's repeats of its last one-op call (transformer._RepeatCall) on or off."""
    import tessera.nn.transformer as transformer

    def call():
        kept = transformer._REPEAT
        transformer._REPEAT = on
        try:
            fn()
        finally:
            transformer._REPEAT = kept
    return call


def one_op_args(conv, x, ei) -> tuple:
    """The arguments the layer passes tessera.transformer_inference in a forward without autograd."""
    import tessera.nn.transformer as transformer
    seen = []
    real = transformer._ops

    class Spy:  # keeps the op's arguments; every other op is torch.ops.tessera's
        def transformer_inference(self, *a):
            seen.append(a)
            return real.transformer_inference(*a)

        def __getattr__(self, name):
            return getattr(real, name)

    transformer._ops = Spy()
    try:
        with torch.no_grad():
            conv(x, ei)
    finally:
        transformer._ops = real
    return seen[0]


def in_grad_mode(args):
    """The one op in grad mode: no input needs a gradient, but each inner op passes its Autograd
    kernel (the path the op takes without autograd skips that: transformer_inference_op.cpp)."""
    def call():
        with torch.enable_grad():
            torch.ops.tessera.transformer_inference(*args)
    return call


def unfolded_op(x, ei, tnn) -> list:
    """The unfolded TransformerConv 4x64 forward's one op (its skip stacked in the q/k/v product)
    alone on the layer's kept weights, without autograd and in grad mode."""
    args = one_op_args(tnn.TransformerConv(128, 64, heads=4).cuda(), x, ei)
    pre = "unfolded TransformerConv 4x64: "
    return [(pre + "tessera.transformer_inference alone", lambda: torch.ops.tessera.transformer_inference(*args)),
            (pre + "the same, grad mode on", in_grad_mode(args))]


if __name__ == "__main__":
    main()
