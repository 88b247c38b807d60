"""Call-2 probe: the GCN SpMM on PubMed and Cora at width 256 (the cached normalized graph), for
ncu: a few calls after warm-up."""
import sys
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
from tessera.nn import GCNConv
for name in sys.argv[1:]:
    _, rowptr, col = bc.load_graph(name)
    ei = bc.edge_index_of(rowptr, col, "cuda")
    n = rowptr.numel() - 1
    conv = GCNConv(256, 256, cached=True).cuda()
    x = torch.randn(n, 256, device="cuda")
    with torch.no_grad():
        conv(x, ei)
        g = conv._cached_graph
        print(name, "rows", g.rows, "nnz", g.nnz, "index", g.col.dtype, flush=True)
        for _ in range(3):
            g.spmm(x)
    torch.cuda.synchronize()
