# Kernel breakdown of one layer forward+backward (torch.profiler CUDA time) for (layer, graph, H, C).
#   python3 prof_fb.py SPEC LAYER H C [WIDTH]
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
import tessera.nn as tnn
from torch.profiler import profile, ProfilerActivity
spec, layer, H, C = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
W = int(sys.argv[5]) if len(sys.argv) > 5 else 128
rowptr, col = tessera.ops.generate_graph(spec, False)
n = rowptr.numel() - 1
dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
ei = torch.stack([col.long(), dst]).cuda()
x = torch.randn(n, W, device="cuda", requires_grad=True)
conv = getattr(tnn, layer)(W, C, heads=H).cuda()
gy = torch.randn(n, H * C, device="cuda")
def fb():
    conv.zero_grad(set_to_none=True); x.grad = None
    conv(x, ei).backward(gy)
for _ in range(3): fb()
torch.cuda.synchronize()
ts = []
for _ in range(9):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fb(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
print(f"== {layer} {spec} {H}x{C} fwd+bwd median of 9 {sorted(ts)[4]:.2f} ms (min {min(ts):.2f})")
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    fb(); torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=14, max_name_column_width=100))
