"""Call-3 probe: why GATv2's fused bias raised small-graph peak memory (Cora 4x64 15.0 -> 18.9 MiB in
call 2). One fwd+bwd of the layer as the bench runs it, (A) bias in the attention op, (B) the old
path (attention without bias, then out.add_(bias)), each under torch's allocator history: the live
blocks at the peak with the frames that allocated them."""
import sys
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
import tessera.nn.gatv2 as gm

_real = gm.fused_attention


def old_path(*args, bias=None, **kw):
    out, alpha = _real(*args, bias=None, **kw)
    return (out.add_(bias) if bias is not None else out), alpha


def live_at_peak(snap):
    trace = snap["device_traces"][0]
    live, cur, best, best_live = {}, 0, -1, None
    for ev in trace:
        a, sz = ev["action"], ev["size"]
        if a == "alloc":
            live[ev["addr"]] = ev
            cur += sz
            if cur > best:
                best, best_live = cur, dict(live)
        elif a == "free_completed" and ev["addr"] in live:
            cur -= live.pop(ev["addr"])["size"]
    return best, best_live


def frames(ev):
    fr = [f for f in ev.get("frames", []) if "site-packages" not in f["filename"] and "<" not in f["filename"]]
    return " <- ".join(f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}" for f in fr[:4]) or \
        " <- ".join(f"{f['name']}" for f in ev.get("frames", [])[:3])


for graph, hc in (("cora", "4x64"), ("pubmed", "4x64")):
    _, rowptr, col = bc.load_graph(graph)
    ei = bc.edge_index_of(rowptr, col, "cuda")
    n = rowptr.numel() - 1
    H, C = (int(v) for v in hc.split("x"))
    torch.manual_seed(0)
    x = torch.randn(n, 128, device="cuda")
    gy = torch.randn(n, H * C, device="cuda")
    conv = tnn.GATv2Conv(128, C, heads=H).cuda()
    xg = x.clone().requires_grad_()

    def fwd_bwd():
        conv.zero_grad(set_to_none=True)
        xg.grad = None
        conv(xg, ei).backward(gy)
    for name, fa in (("A fused bias", _real), ("B old path", old_path)):
        gm.fused_attention = fa
        for _ in range(3):
            fwd_bwd()
        peak = bc.peak_bytes_cuda(fwd_bwd)
        # as attention_layer_bench measures: the graph cache reset, so the measured call builds it
        conv.zero_grad(set_to_none=True)
        xg.grad = None
        conv._graph_cache = type(conv._graph_cache)()
        import gc
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.synchronize()
        torch.cuda.memory._record_memory_history(enabled="all", stacks="python", max_entries=100000)
        fwd_bwd()
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        best, blocks = live_at_peak(snap)
        print(f"== {graph} {hc} {name}: peak above inputs {peak / 2**20:.2f} MiB (warm cache); bench-mode trace peak {best / 2**20:.2f} MiB "
              f"over {len(blocks)} blocks allocated in the call", flush=True)
        for ev in sorted(blocks.values(), key=lambda e: -e["size"])[:12]:
            print(f"   {ev['size'] / 2**20:8.2f} MiB  {frames(ev)}")
    gm.fused_attention = _real
