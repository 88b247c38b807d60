# A/B of tessera.nn.overlap (side-stream residual branch) in one process: TransformerConv / GATv2Conv(residual)
#   python3 overlap_ab.py
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
import tessera.nn as tnn
from tessera.nn import overlap
torch.manual_seed(0)
CASES = [("grid:rows=1024,cols=1024", "TransformerConv", 8, 128), ("rmat:scale=20,degree=16,seed=1", "TransformerConv", 4, 64),
         ("grid:rows=1024,cols=1024", "TransformerConv", 4, 64), ("grid:rows=1024,cols=1024", "TransformerConv", 2, 256),
         ("rmat:scale=20,degree=16,seed=1", "GATv2Conv", 4, 64)]
def ms(fn, reps=7):
    for _ in range(2): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]
for spec, layer, H, C in CASES:
    rowptr, col = tessera.ops.generate_graph(spec, False)
    n = rowptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
    ei = torch.stack([col.long(), dst]).cuda()
    kw = {"residual": True} if layer == "GATv2Conv" else {}
    conv = getattr(tnn, layer)(128, C, heads=H, **kw).cuda()
    x = torch.randn(n, 128, device="cuda", requires_grad=True)
    gy = torch.randn(n, H * C, device="cuda")
    def fwd():
        with torch.no_grad(): return conv(x, ei)
    def fb():
        conv.zero_grad(set_to_none=True); x.grad = None
        conv(x, ei).backward(gy)
    res = {}
    for mode in (False, True, False, True):
        overlap.ENABLED = mode
        res.setdefault(mode, []).append((ms(fwd), ms(fb)))
    overlap.ENABLED = False; y0 = fwd().clone(); fb(); g0 = x.grad.clone(); w0 = [p.grad.clone() for p in conv.parameters()]
    overlap.ENABLED = True; y1 = fwd().clone(); fb(); g1 = x.grad.clone(); w1 = [p.grad.clone() for p in conv.parameters()]
    dw = max(float((a - b).abs().max()) for a, b in zip(w0, w1))
    print(f"{layer} {spec} {H}x{C}: off fwd/fb {res[False]}  on {res[True]}  | max diff out {float((y0-y1).abs().max()):.2e} dx {float((g0-g1).abs().max()):.2e} dW {dw:.2e}", flush=True)
    torch.cuda.reset_peak_memory_stats()
    for mode in (False, True):
        overlap.ENABLED = mode; torch.cuda.synchronize(); base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats(); fb(); torch.cuda.synchronize()
        print(f"   overlap={mode} peak above base {(torch.cuda.max_memory_allocated() - base) / 2**20:.0f} MiB", flush=True)
    del conv, x, gy, ei; torch.cuda.empty_cache()
