"""Call-2 probe: column sums of a gradient (the bias gradients), GPU us per call from CUDA graphs:
torch's dy.sum(0) against cuBLAS gemv (mv of dy^T with ones) and a [1, M] x [M, N] mm."""
import sys
import torch
sys.path.insert(0, "bench")
import bench_common as bc
dev = "cuda"
for M, N in ((2708, 256), (19717, 1024), (19717, 256), (1048576, 256), (1048576, 1024), (65536, 512)):
    dy = torch.randn(M, N, device=dev)
    ones = torch.ones(M, device=dev)
    ones_row = ones.view(1, M)
    ref = dy.double().sum(0)
    rows = {"sum(0)": lambda: dy.sum(0), "mv(dy.t(), ones)": lambda: torch.mv(dy.t(), ones),
            "mm(ones[1,M], dy)": lambda: torch.mm(ones_row, dy)}
    floor_us = M * N * 4 / 4.2e12 * 1e6
    out = []
    for k, f in rows.items():
        us = bc.graph_us_cuda(f)
        err = (f().double().view(-1) - ref).abs().max().item() / ref.abs().max().item()
        out.append(f"{k} {us:8.1f} us ({floor_us / us * 100:3.0f}% of read floor, rel err {err:.1e})")
    print(f"  [{M:8d} x {N:5d}]: " + " | ".join(out), flush=True)
    del dy, ones
