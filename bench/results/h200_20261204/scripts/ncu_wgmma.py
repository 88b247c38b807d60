"""ncu target: tessera.linear's wgmma projection at the layers' K = 128 shape (2^20 x 128 -> 512),
warmed up, then one more call."""
import sys
import torch
sys.path.insert(0, "bench")
import bench_common as bc
bc.import_tessera()
M, K, N = 1048576, 128, 512
x = torch.randn(M, K, device="cuda"); w = torch.randn(N, K, device="cuda"); b = torch.randn(N, device="cuda")
for _ in range(3):
    torch.ops.tessera.linear(x, w, b)
torch.cuda.synchronize()
torch.ops.tessera.linear(x, w, b)
torch.cuda.synchronize()
print("done")
