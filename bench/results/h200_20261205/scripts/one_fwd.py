#!/usr/bin/env python3
"""Forward calls of one tessera attention layer (for ncu): graph layer HxC calls."""
import sys
sys.path.insert(0, "bench")
import torch
import bench_common as bc
bc.import_tessera()
import tessera.nn as tnn
gname, layer, hc, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
H, C = (int(v) for v in hc.split("x"))
dev = torch.device("cuda")
spec, rowptr, col = bc.load_graph(gname, ".carry/data")
ei = bc.edge_index_of(rowptr, col, dev)
x = torch.randn(rowptr.numel() - 1, 128, device=dev)
conv = getattr(tnn, "GATv2Conv" if layer == "gatv2" else "TransformerConv")(128, C, heads=H).to(dev)
with torch.no_grad():
    for _ in range(calls):
        conv(x, ei)
torch.cuda.synchronize()
