#!/usr/bin/env python3
"""Where the GPU time of one attention layer's forward+backward goes: the torch profiler's
per-kernel table (CUDA self time) for tessera.nn.GATv2Conv / TransformerConv, one (graph, H, C).

attention_layer_bench.py gives the end-to-end ratios; this splits them into the dense projections
(cuBLAS, the same GEMMs PyG runs), the fused attention kernels (forward, backward targets and
sources passes, each launched for the light and the heavy bucket) and the rest (bias gradients,
the residual add, gradient accumulation).

    python3 bench/attention_profile.py [--graph rmat] [--layer transformer] [--hc 4x64] [--width 128]
                                       [--dtype f32|f16|bf16] [--edge-dim D] [--forward-only] [--timeline]
"""
import argparse
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import bench_common as bc
from attention_layer_bench import DTYPES, PYG_NAMES


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", default="rmat",
                   help=f"one of {bc.BENCH_GRAPHS} (Cora, PubMed from --data-dir) or a generator spec")
    p.add_argument("--data-dir", default=bc.DEFAULT_DATA_DIR)
    p.add_argument("--layer", default="transformer", choices=sorted(PYG_NAMES))
    p.add_argument("--hc", default="4x64", help="heads x channels")
    p.add_argument("--width", type=int, default=128, help="input feature width")
    p.add_argument("--rows", type=int, default=14, help="kernel table rows")
    p.add_argument("--dtype", default="f32", choices=sorted(DTYPES), help="layer's and inputs' type")
    p.add_argument("--edge-dim", type=int, default=0, help="edge feature width (0: none)")
    p.add_argument("--forward-only", action="store_true", help="profile the forward alone (no autograd)")
    p.add_argument("--timeline", action="store_true",
                   help="also where one call's event-timed span goes: its host path, the call timed after a GPU "
                        "sleep that hides the host's lead, back to back, and the GPU's busy time")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("attention_profile.py needs a CUDA device")
    bc.import_tessera()
    import tessera.nn as tnn
    H, C = (int(v) for v in a.hc.split("x"))
    spec, rowptr, col = bc.require_graph(a.graph, a.data_dir, "attention_profile.py")
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, "cuda")
    dtype = DTYPES[a.dtype]
    x = torch.randn(n, a.width, device="cuda", dtype=dtype, requires_grad=True)
    kw = {"edge_dim": a.edge_dim} if a.edge_dim else {}
    extra = (torch.randn(ei.size(1), a.edge_dim, device="cuda", dtype=dtype),) if a.edge_dim else ()
    conv = getattr(tnn, PYG_NAMES[a.layer])(a.width, C, heads=H, **kw).to("cuda", dtype)
    gy = torch.randn(n, H * C, device="cuda", dtype=dtype)

    def fwd_bwd():
        conv.zero_grad(set_to_none=True)
        x.grad = None
        conv(x, ei, *extra).backward(gy)

    def fwd():
        with torch.no_grad():
            conv(x, ei, *extra)

    step = fwd if a.forward_only else fwd_bwd
    ms = bc.median_ms_cuda(step, reps=5)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    what = "forward" if a.forward_only else "forward+backward"
    print(f"== {a.layer} {spec} {H}x{C} {a.dtype} edge_dim {a.edge_dim} (input width {a.width}): {what} "
          f"{ms:.2f} ms (median of 5)")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=a.rows, max_name_column_width=100))
    if a.timeline:
        print_timeline(step, ms)


def print_timeline(step, per_call_ms: float, calls: int = 10):
    """The bench times each call alone between two CUDA events (attention_layer_bench.py), so the
    GPU's idle time inside that span counts: the host's lead before the first kernel and any gap
    where the host falls behind. Against that per-call time: the call's host path (wall time of
    the call without synchronizing, median), the call timed after a 1 ms GPU sleep queued ahead of
    its start event (the host's lead then runs while the GPU is busy: what stays is the GPU's
    part), `calls` calls back to back, the kernels' busy time (profiler), and the host path by op
    (the CPU profiler's table over `calls` calls: which ops and Python around them make it)."""
    host, after_sleep = [], []
    for _ in range(calls):
        torch.cuda.synchronize()
        t = time.perf_counter()
        step()
        host.append((time.perf_counter() - t) * 1e3)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SLEEP_CYCLES)  # keeps the GPU busy while the host runs the call's path
        start.record()
        step()
        end.record()
        end.synchronize()
        after_sleep.append(start.elapsed_time(end))
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        step()
    end.record()
    end.synchronize()
    back_to_back = start.elapsed_time(end) / calls
    busy, kernels = bc.gpu_busy_us(step)
    # The host path by op (profiled: a few us more each). Twice: the first session's first op carries
    # the profiler's setup (about 2 ms on the H100 host of gpu_20261206h, which made its tables useless).
    for _ in range(2):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(calls):
                step()
        torch.cuda.synchronize()
    print(f"host path by op, {calls} calls:")
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=12, max_name_column_width=60))
    print(f"timeline (us): per call {per_call_ms * 1e3:.0f} (event-timed alone, median); host path "
          f"{statistics.median(host) * 1e3:.0f}; per call after a GPU sleep {statistics.median(after_sleep) * 1e3:.0f}; back to back "
          f"{back_to_back * 1e3:.0f} over {calls} calls; GPU busy {busy:.0f} in {kernels} kernels")


# About 1 ms at the H100's and H200's 1.98 GHz: longer than a layer call's host path.
SLEEP_CYCLES = 2_000_000


if __name__ == "__main__":
    main()
