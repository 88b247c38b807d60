#!/usr/bin/env python3
"""Where the GPU time of one GCN layer goes: the torch profiler's per-kernel table (CUDA self time)
for tessera.nn.GCNConv forward and forward+backward, next to PyG's GCNConv, per graph and width.

gcn_bench.py gives the end-to-end ratios; this is the diagnostic that splits them into the dense
transform (shared by both), the SpMM and everything else (bias, copies, allocations).

    python3 bench/gcn_profile.py [--graphs grid,rmat,clustered] [--width 256] [--reps 10] [--out FILE]
                                 [--who tessera,pyg]
Under Nsight Compute (hardware counters of the SpMM kernel, one launch):
    ncu --clock-control none -k regex:csr_rows --launch-skip 3 --launch-count 1 --section SpeedOfLight \
        --section MemoryWorkloadAnalysis python3 bench/gcn_profile.py --graphs grid --who tessera --reps 1
"""
import argparse
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import bench_common as bc


def kernel_table(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = e.self_cuda_time_total
        if t > 0 and e.count > 0:
            rows.append((t / reps, e.count // reps, e.key))
    rows.sort(reverse=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", default="grid,rmat,clustered")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--out", default=None, help="also write the tables here")
    p.add_argument("--who", default="tessera,pyg", help="which layers to profile (tessera, pyg)")
    a = p.parse_args()
    out = open(a.out, "w") if a.out else None

    def emit(s):
        print(s)
        if out:
            print(s, file=out)

    tessera = bc.import_tessera()
    from tessera.nn import GCNConv
    try:
        from torch_geometric.nn import GCNConv as PygGCNConv
    except Exception:
        PygGCNConv = None
    dev = torch.device("cuda")
    for name in a.graphs.split(","):
        source, rowptr, col = bc.require_graph(name, a.data_dir or bc.DEFAULT_DATA_DIR, "gcn_profile")
        n = rowptr.numel() - 1
        ei = bc.edge_index_of(rowptr, col, dev)
        w = a.width
        x = torch.randn(n, w, device=dev)
        gy = torch.randn(n, w, device=dev)
        who = a.who.split(",")
        convs = {"tessera": GCNConv(w, w, cached=True).to(dev)} if "tessera" in who else {}
        if PygGCNConv is not None and "pyg" in who:
            convs["pyg"] = PygGCNConv(w, w, cached=True).to(dev)
        for who, conv in convs.items():
            xg = x.clone().requires_grad_()

            def fwd():
                with torch.no_grad():
                    conv(x, ei)

            def fwd_bwd():
                conv.zero_grad(set_to_none=True)
                xg.grad = None
                conv(xg, ei).backward(gy)

            for what, fn in (("forward", fwd), ("forward+backward", fwd_bwd)):
                rows = kernel_table(fn, a.reps)
                total = sum(r[0] for r in rows)
                emit(f"{name} width {w} {who} {what}: {total / 1e3:.3f} ms of kernels per call")
                for us, calls, key in rows[:12]:
                    emit(f"  {us / 1e3:9.3f} ms  x{calls:<3d} {key[:110]}")
        del convs, x, gy
        torch.cuda.empty_cache()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
