# What torch's F.linear / addmm cost on the layers' shapes (same shapes as gemm_probe.cu), and which
# kernel it launches (profiler).
import torch, torch.nn.functional as Fn
N = 1 << 20
def med(f, reps=15):
    f(); f(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]
for (i, o, bias) in [(256, 256, False), (64, 64, False), (512, 512, False), (128, 1024, True), (128, 4096, True), (128, 2048, True)]:
    x = torch.randn(N, i, device='cuda'); w = torch.randn(o, i, device='cuda'); b = torch.randn(o, device='cuda') if bias else None
    t = med(lambda: Fn.linear(x, w, b))
    print(f"F.linear {i}->{o} bias={bias}: {t:.3f} ms {2*N*i*o/t/1e9:.1f} TFLOP/s")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        Fn.linear(x, w, b); torch.cuda.synchronize()
    print("   kernels:", [e.key[:90] for e in p.key_averages()])
    del x, w
