# Forward and forward+backward medians (of 9, after 3 warm-ups) of tessera layers for several
# (graph, layer, H, C) cases, with whatever TESSERA_LIBRARY names; one line per case.
#   python3 ab_layers.py TAG "SPEC LAYER H C" ...
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
import tessera.nn as tnn
tag = sys.argv[1]
graphs = {}
def med(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(9):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[4]
for case in sys.argv[2:]:
    spec, layer, H, C = case.split(); H, C = int(H), int(C)
    if spec not in graphs:
        rowptr, col = tessera.ops.generate_graph(spec, False)
        n = rowptr.numel() - 1
        dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
        graphs[spec] = (n, torch.stack([col.long(), dst]).cuda())
    n, ei = graphs[spec]
    torch.manual_seed(0)
    x = torch.randn(n, 128, device="cuda", requires_grad=True)
    conv = getattr(tnn, layer)(128, C, heads=H).cuda()
    gy = torch.randn(n, H * C, device="cuda")
    def fwd():
        with torch.no_grad(): conv(x, ei)
    def fb():
        conv.zero_grad(set_to_none=True); x.grad = None
        conv(x, ei).backward(gy)
    f, b = med(fwd), med(fb)
    print(f"{tag} {spec} {layer} {H}x{C}: fwd {f:.2f} ms, fwd+bwd {b:.2f} ms", flush=True)
    del x, conv, gy
    torch.cuda.empty_cache()
