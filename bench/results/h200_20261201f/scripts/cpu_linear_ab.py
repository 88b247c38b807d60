import torch, time, tessera
import tessera.nn._linear as L
from tessera.nn import GCNConv, GATv2Conv
torch.set_num_threads(2)
rowptr, col = tessera.ops.generate_graph("rmat:scale=16,degree=16,seed=1", False)
n = rowptr.numel() - 1
dst = torch.repeat_interleave(torch.arange(n), rowptr[1:] - rowptr[:-1])
ei = torch.stack([col, dst])
x = torch.randn(n, 128, requires_grad=True)
gy = torch.randn(n, 128)
def t(fn, reps):
    fn(); ts=[]
    for _ in range(reps):
        a=time.perf_counter(); fn(); ts.append(time.perf_counter()-a)
    ts.sort(); return ts[0]*1e3, ts[reps//4]*1e3
for conv in (GCNConv(128, 128, cached=True), GATv2Conv(128, 32, heads=4)):
    def fwd():
        with torch.no_grad(): conv(x, ei)
    def fb():
        conv.zero_grad(set_to_none=True); x.grad = None; conv(x, ei).backward(gy)
    res = {}
    for mode in ("torch", "tessera", "torch", "tessera", "torch", "tessera"):
        L._MIN_BYTES = 1 << 62 if mode == "torch" else 4 << 20
        r = (t(fwd, 8), t(fb, 6))
        res.setdefault(mode, []).append("fwd min %.1f q25 %.1f | fb min %.1f q25 %.1f" % (r[0] + r[1]))
    print(type(conv).__name__)
    for k, v in res.items(): print("  ", k, v)
