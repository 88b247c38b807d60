"""ncu driver (session 2026-12-03f): one call of each linear variant at the shapes that matter, so ncu
can profile each kernel once. Variants are forced through TESSERA_VARIANT_LINEAR."""
import os, sys
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
dev = "cuda"
torch.manual_seed(0)
which = sys.argv[1] if len(sys.argv) > 1 else "linear"
if which == "linear":
    for M, K, N in [(19717, 128, 2048), (1048576, 256, 256)]:
        x = torch.randn(M, K, device=dev); w = torch.randn(N, K, device=dev); b = torch.randn(N, device=dev)
        for v in ["cuda.tf32x3.128x128", "cuda.wgmma.128x128"]:
            os.environ["TESSERA_VARIANT_LINEAR"] = v
            torch.ops.tessera.linear(x, w, b); torch.cuda.synchronize()
    # dX = dY W with W as stored (WT), PubMed GATv2 8x128's shape
    M, NO, KI = 19717, 2048, 128
    x = torch.randn(M, KI, device=dev, requires_grad=True); w = torch.randn(NO, KI, device=dev); g = torch.randn(M, NO, device=dev)
    for v in ["cuda.tf32x3.64x64", "cuda.wgmma.128x128"]:
        os.environ["TESSERA_VARIANT_LINEAR"] = v
        y = torch.ops.tessera.linear(x, w, None)
        torch.autograd.grad(y, x, g); torch.cuda.synchronize()
else:  # one GATv2 8x128 fwd+bwd step on PubMed (after two warm steps outside the profiled range)
    import tessera.nn as tnn
    source, rowptr, col = bc.load_graph("pubmed")
    ei, n = bc.edge_index_of(rowptr, col, dev), rowptr.numel() - 1
    x = torch.randn(n, 128, device=dev, requires_grad=True)
    conv = tnn.GATv2Conv(128, 128, heads=8).to(dev)
    gy = torch.randn(n, 1024, device=dev)
    for i in range(3):
        if i == 2: torch.cuda.cudart().cudaProfilerStart()
        conv.zero_grad(set_to_none=True); x.grad = None
        conv(x, ei).backward(gy); torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
