# One no-grad forward of a layer (a target for ncu):  python3 fwd_once.py SPEC LAYER H C
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
import tessera.nn as tnn
spec, layer, H, C = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rowptr, col = tessera.ops.generate_graph(spec, False)
n = rowptr.numel() - 1
dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
ei = torch.stack([col.long(), dst]).cuda()
x = torch.randn(n, 128, device="cuda")
conv = getattr(tnn, layer)(128, C, heads=H).cuda()
with torch.no_grad():
    conv(x, ei); torch.cuda.synchronize()
