"""Call-3 repro: one layer's fwd+bwd on a graph, a few times, synchronizing after each step."""
import sys, torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
graph, layer, hc, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
H, C = map(int, hc.split("x"))
source, rowptr, col = bc.load_graph(graph)
ei = bc.edge_index_of(rowptr, col, "cuda"); n = rowptr.numel() - 1
torch.manual_seed(0)
x = torch.randn(n, 128, device="cuda", requires_grad=True)
conv = (tnn.GATv2Conv if layer == "gatv2" else tnn.TransformerConv)(128, C, heads=H).cuda()
gy = torch.ones(n, H * C, device="cuda")
for i in range(reps):
    conv.zero_grad(set_to_none=True); x.grad = None
    y = conv(x, ei); torch.cuda.synchronize(); print("fwd ok", i, flush=True)
    y.backward(gy); torch.cuda.synchronize(); print("bwd ok", i, flush=True)
print("done", graph, layer, hc)
