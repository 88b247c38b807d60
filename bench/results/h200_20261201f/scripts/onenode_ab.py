# A/B in one process: TransformerConv's one-node path (x a tensor) against the composed layer (x as (x, x)).
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
tessera = bc.import_tessera()
import tessera.nn as tnn
torch.manual_seed(0)
CASES = [("grid:rows=1024,cols=1024", 8, 128), ("rmat:scale=20,degree=16,seed=1", 4, 64),
         ("grid:rows=1024,cols=1024", 4, 64), ("grid:rows=1024,cols=1024", 2, 256)]
def ms(fn, reps=7):
    for _ in range(2): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return round(sorted(ts)[len(ts) // 2], 2)
for spec, H, C in CASES:
    rowptr, col = tessera.ops.generate_graph(spec, False)
    n = rowptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
    ei = torch.stack([col.long(), dst]).cuda()
    conv = tnn.TransformerConv(128, C, heads=H).cuda()
    x = torch.randn(n, 128, device="cuda", requires_grad=True)
    gy = torch.randn(n, H * C, device="cuda")
    def run(inp):
        def fwd():
            with torch.no_grad(): return conv(inp, ei)
        def fb():
            conv.zero_grad(set_to_none=True); x.grad = None
            conv(inp, ei).backward(gy)
        return fwd, fb
    res = {"composed": [], "one_node": []}
    for name in ("composed", "one_node", "composed", "one_node"):
        fwd, fb = run((x, x) if name == "composed" else x)
        res[name].append((ms(fwd), ms(fb)))
    peaks = {}
    for name in ("composed", "one_node"):
        fwd, fb = run((x, x) if name == "composed" else x)
        fb(); torch.cuda.synchronize(); base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats()
        fb(); torch.cuda.synchronize(); peaks[name] = round((torch.cuda.max_memory_allocated() - base) / 2**20)
    print(f"{spec} {H}x{C}: (fwd, fwd+bwd) ms {res}  peak MiB above base {peaks}", flush=True)
    del conv, x, gy, ei; torch.cuda.empty_cache()
