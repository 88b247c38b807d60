"""Call-1 probe (2026-12-03c): wall (CUDA events, one fwd+bwd, median of 20) against GPU busy time
(sum of kernel times from torch.profiler, per iteration) for the layer rows near a target, and the
kernels each takes. wall - GPU = time the GPU waits for the host."""
import sys, statistics, collections
import torch
from torch.profiler import profile, ProfilerActivity
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
dev = "cuda"
import os
cases = [("pubmed", "gatv2", 8, 128), ("pubmed", "transformer", 8, 128), ("grid", "transformer", 2, 256),
         ("grid", "gatv2", 4, 64)]
if os.environ.get("GAP_CASES"):
    cases = [c for c in cases if f"{c[0]}:{c[1]}" in os.environ["GAP_CASES"].split(",")]
graphs = {}
for gname, layer, H, C in cases:
    if gname not in graphs:
        source, rowptr, col = bc.load_graph(gname)
        graphs[gname] = (bc.edge_index_of(rowptr, col, dev), rowptr.numel() - 1)
    ei, n = graphs[gname]
    torch.manual_seed(0)
    x = torch.randn(n, 128, device=dev, requires_grad=True)
    conv = (tnn.GATv2Conv if layer == "gatv2" else tnn.TransformerConv)(128, C, heads=H).to(dev)
    gy = torch.randn(n, H * C, device=dev)
    def step():
        conv.zero_grad(set_to_none=True); x.grad = None
        conv(x, ei).backward(gy)
    for _ in range(5): step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); step(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    wall = statistics.median(ts) * 1e3
    iters = 10
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters): step()
        torch.cuda.synchronize()
    per = collections.defaultdict(float); cnt = collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = e.name[:90]
            per[k] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            cnt[k] += 1
    gpu = sum(per.values()) / iters
    print(f"== {gname} {layer} {H}x{C}: wall {wall:.0f} us, GPU busy {gpu:.0f} us, gap {wall - gpu:.0f} us, "
          f"{sum(cnt.values()) / iters:.0f} kernels+memsets per step")
    for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:20]:
        print(f"   {v / iters:8.1f} us  x{cnt[k] / iters:.0f}  {k}")
