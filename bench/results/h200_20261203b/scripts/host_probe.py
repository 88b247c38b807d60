"""Call-1 probe (2026-12-03b): where a small-graph forward+backward's host time goes.
Host microseconds per call (no sync: the host is the bottleneck) of torch's autograd floor, one
Linear, and the layers; then GPU us per call of the linear tiles at the small graphs' shapes."""
import os, sys, time, statistics
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
dev = "cuda"

def host_us(fn, reps=1000):
    for _ in range(50): fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps): fn()
    h = (time.perf_counter() - t) / reps * 1e6
    torch.cuda.synchronize()
    return h

def ev_us(fn, reps=50):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts) * 1e3

for gname in ("cora", "pubmed"):
    source, rowptr, col = bc.load_graph(gname)
    ei = bc.edge_index_of(rowptr, col, dev)
    n = rowptr.numel() - 1
    x = torch.randn(n, 128, device=dev)
    xg = x.clone().requires_grad_()
    print(f"== {gname}: {n} nodes; host us per call (no sync) | events us (one call)")
    g256 = torch.randn(n, 256, device=dev)
    g128 = torch.randn(n, 128, device=dev)
    rows = {}
    rows["autograd floor: (x*2).backward"] = lambda: (xg * 2).backward(g128)
    rows["autograd: (x*2*3).backward (2 nodes)"] = lambda: (xg * 2 * 3).backward(g128)
    lin = torch.nn.Linear(128, 256).to(dev)
    rows["torch Linear fwd+bwd"] = lambda: lin(xg).backward(g256)
    rows["tessera.linear fwd+bwd"] = lambda: torch.ops.tessera.linear(xg, lin.weight, lin.bias).backward(g256)
    rows["tessera.linear fwd+bwd (x no grad)"] = lambda: torch.ops.tessera.linear(x, lin.weight, lin.bias).backward(g256)
    gat = tnn.GATv2Conv(128, 64, heads=4).to(dev)
    tr = tnn.TransformerConv(128, 64, heads=4).to(dev)
    gcn = tnn.GCNConv(128, 256, cached=True).to(dev)
    rows["tessera GATv2 4x64 fwd+bwd"] = lambda: gat(xg, ei).backward(g256)
    rows["tessera Transformer 4x64 fwd+bwd"] = lambda: tr(xg, ei).backward(g256)
    rows["tessera GCN 128->256 fwd+bwd"] = lambda: gcn(xg, ei).backward(g256)
    try:
        import torch_geometric.nn as pnn
        pg = pnn.GATv2Conv(128, 64, heads=4).to(dev)
        pgcn = pnn.GCNConv(128, 256, cached=True).to(dev)
        rows["PyG GATv2 4x64 fwd+bwd"] = lambda: pg(xg, ei).backward(g256)
        rows["PyG GCN 128->256 fwd+bwd"] = lambda: pgcn(xg, ei).backward(g256)
    except ImportError:
        pass
    for k, f in rows.items():
        xg.grad = None
        print(f"  {k:42s} {host_us(f, 300):8.1f} | {ev_us(f):8.1f}", flush=True)
    with torch.no_grad():
        print(f"  {'tessera GATv2 4x64 forward':42s} {host_us(lambda: gat(x, ei)):8.1f} | {ev_us(lambda: gat(x, ei)):8.1f}")
        print(f"  {'tessera GCN forward':42s} {host_us(lambda: gcn(x, ei)):8.1f} | {ev_us(lambda: gcn(x, ei)):8.1f}")
    if gname == "cora":
        from torch.profiler import ProfilerActivity, profile
        def step():
            gat.zero_grad(set_to_none=True); xg.grad = None
            gat(xg, ei).backward(g256)
        for _ in range(5): step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(50): step()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=45, max_name_column_width=70))

print("== linear: GPU us per call (CUDA graph of 20), heuristic vs forced tiles")
for M in (2708, 19717, 1048576):
    for K, N in ((128, 256), (128, 1024), (64, 64), (256, 256)):
        x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
        row = {"cublas": bc.graph_us_cuda(lambda: torch.nn.functional.linear(x, w, b)),
               "heuristic": bc.graph_us_cuda(lambda: torch.ops.tessera.linear(x, w, b))}
        for v in ("cuda.tf32x3.128x128", "cuda.tf32x3.128x64"):
            os.environ["TESSERA_VARIANT_LINEAR"] = v
            row[v[-7:]] = bc.graph_us_cuda(lambda: torch.ops.tessera.linear(x, w, b))
        os.environ.pop("TESSERA_VARIANT_LINEAR")
        print(f"  {M:8d} x {K:4d} -> {N:5d}: " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()), flush=True)
        del x, w, b
