#!/usr/bin/env python3
"""Does timing PyG first change tessera's small-graph forward time in the layer bench? Per config:
ours alone; PyG's whole measure() (as the bench); ours again after gc + empty_cache (as the bench);
ours a third time; then 10 alternating rounds of 40 calls each side (per-call events)."""
import gc, statistics, sys, time
sys.path.insert(0, "bench")
import torch
import bench_common as bc
import attention_layer_bench as alb
bc.import_tessera()
import tessera.nn as tnn
import torch_geometric.nn as pnn
dev = torch.device("cuda")

def per_call(fn, n):
    out = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); out.append(s.elapsed_time(e))
    return out

for gname in sys.argv[1].split(","):
    spec, rowptr, col = bc.load_graph(gname, ".carry/data")
    n = rowptr.numel() - 1
    ei = bc.edge_index_of(rowptr, col, dev)
    torch.manual_seed(0)
    x = torch.randn(n, 128, device=dev)
    for H, C in [tuple(int(v) for v in s.split("x")) for s in sys.argv[2].split(",")]:
        for layer, name in (("gatv2", "GATv2Conv"), ("transformer", "TransformerConv")):
            if layer not in sys.argv[3].split(","):
                continue
            ours = getattr(tnn, name)(128, C, heads=H).to(dev)
            peer = getattr(pnn, name)(128, C, heads=H).to(dev)
            ours.load_state_dict(peer.state_dict())
            fo = lambda: ours(x, ei)
            fp = lambda: peer(x, ei)
            r = {}
            with torch.no_grad():
                fo(); fp(); torch.cuda.synchronize()
                r["ours_first"] = bc.median_ms_cuda(fo, warmup=1, reps=5, min_ms=bc.LAYER_MIN_MS)
            t0 = time.perf_counter()
            pf, pfb, _ = alb.measure(peer, x, ei, 5)
            r["pyg_measure_s"] = time.perf_counter() - t0
            r["pyg_fwd"] = pf
            gc.collect(); torch.cuda.empty_cache()
            with torch.no_grad():
                r["ours_after_pyg"] = bc.median_ms_cuda(fo, warmup=1, reps=5, min_ms=bc.LAYER_MIN_MS)
                r["ours_again"] = bc.median_ms_cuda(fo, warmup=1, reps=5, min_ms=bc.LAYER_MIN_MS)
                a, b = [], []
                for _ in range(10):
                    a += per_call(fo, 40); b += per_call(fp, 40)
                r["alt_ours"] = statistics.median(a); r["alt_pyg"] = statistics.median(b)
                r["alt_ours_p10_p90"] = (sorted(a)[len(a)//10], sorted(a)[9*len(a)//10])
            of, ofb, _ = alb.measure(ours, x, ei, 5)
            r["ours_measure_fwd"], r["ours_measure_fb"] = of, ofb
            print(f"{gname} {layer} {H}x{C}: " + "  ".join(f"{k} {v if not isinstance(v, float) else round(v, 4)}" for k, v in r.items()), flush=True)
            del ours, peer; gc.collect(); torch.cuda.empty_cache()
