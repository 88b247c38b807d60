# One forward+backward of a layer after a warm-up, inside cudaProfilerStart/Stop (an ncu target
# with --profile-from-start off):  python3 fb_once.py SPEC LAYER H C [fwd]
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
import tessera.nn as tnn
spec, layer, H, C = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fwd_only = len(sys.argv) > 5 and sys.argv[5] == "fwd"
rowptr, col = tessera.ops.generate_graph(spec, False)
n = rowptr.numel() - 1
dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
ei = torch.stack([col.long(), dst]).cuda()
x = torch.randn(n, 128, device="cuda", requires_grad=not fwd_only)
conv = getattr(tnn, layer)(128, C, heads=H).cuda()
gy = torch.randn(n, H * C, device="cuda")
def step():
    if fwd_only:
        with torch.no_grad():
            conv(x, ei)
    else:
        conv(x, ei).backward(gy)
step(); torch.cuda.synchronize()
torch.cuda.profiler.start()
step(); torch.cuda.synchronize()
torch.cuda.profiler.stop()
