"""SAGEConv's root term on CUDA fp32 before and after this session's change, timed alone:
out.addmm_(x_dst, W_r^T) (cuBLAS's fp32 SGEMM accumulating into lin_l's output, before) against
tessera.linear(x_dst, W_r, None, out) (the tf32x3 kernel with out as its residual, after), forward
and forward+backward, M = 2^20 rows at K = N in {64, 128, 256}; CUDA events, median of 20."""
import statistics

import torch

import tessera  # noqa: F401

ops = torch.ops.tessera


def timed(fn, reps=20):
    ts = []
    for _ in range(reps + 3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts[3:])


def main():
    torch.manual_seed(0)
    m = 2 ** 20
    for k in (64, 128, 256):
        x = torch.randn(m, k, device="cuda", requires_grad=True)
        w = (torch.randn(k, k, device="cuda") / k ** 0.5).requires_grad_()
        base = torch.randn(m, k, device="cuda", requires_grad=True)
        g = torch.randn(m, k, device="cuda")
        old = lambda: (base * 1).addmm_(x, w.t())  # noqa: E731 (a fresh out, as lin_l's)
        new = lambda: ops.linear(x, w, None, base * 1)  # noqa: E731
        fresh = lambda: base * 1  # noqa: E731 (the fresh out alone, in both)
        with torch.no_grad():
            d = (old() - new()).abs().max().item()
            f0, fo, fn_ = timed(fresh), timed(old), timed(new)
        b0 = timed(lambda: fresh().backward(g))
        bo = timed(lambda: old().backward(g))
        bn = timed(lambda: new().backward(g))
        flop = 2 * m * k * k
        print(f"K=N={k:3d}: forward addmm_ {fo - f0:.3f} ms, tessera.linear {fn_ - f0:.3f} ms "
              f"(-> {(fo - f0) / (fn_ - f0):.2f}x; GEMM {flop / (fo - f0) / 1e9:.1f} / "
              f"{flop / (fn_ - f0) / 1e9:.1f} TFLOP/s); fwd+bwd {bo - b0:.3f} / {bn - b0:.3f} ms "
              f"(-> {(bo - b0) / (bn - b0):.2f}x); max |diff| {d:.2e}")


if __name__ == "__main__":
    main()
