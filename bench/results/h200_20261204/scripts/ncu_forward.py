"""ncu target: the grid GATv2 4x64 layer forward (x of width 128), warmed up, then one more call."""
import sys
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
layer = sys.argv[1] if len(sys.argv) > 1 else "gatv2"
src, rowptr, col = bc.load_graph("grid")
n = rowptr.numel() - 1
ei = bc.edge_index_of(rowptr, col, "cuda")
torch.manual_seed(0)
x = torch.randn(n, 128, device="cuda")
conv = (tnn.GATv2Conv if layer == "gatv2" else tnn.TransformerConv)(128, 64, heads=4).cuda()
with torch.no_grad():
    for _ in range(3):
        conv(x, ei)
    torch.cuda.synchronize()
    conv(x, ei)
    torch.cuda.synchronize()
print("done")
