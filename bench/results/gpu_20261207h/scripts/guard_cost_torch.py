"""Call B (the op library was not on the fresh machine, and no device time was left to build it):
guard_cost.py's sequence on a stand-in layer of plain torch ops (a host-bound no-grad forward of
three small Linears and an add on CUDA): plain, the is_compiling guard before any disable wrapper
exists, after one is made, disable's wrapper, the guard after the wrapper ran, plain again."""
import time

import torch


class Stand(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = (torch.nn.Linear(64, 64) for _ in range(3))

    def forward(self, x):
        return self.a(x) + self.b(x) * self.c(x)


def best_us(m, x):
    best = float("inf")
    with torch.no_grad():
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(2000):
                m(x)
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / 2000 * 1e6)
    return best


def main():
    m = Stand().cuda()
    x = torch.randn(256, 64, device="cuda")
    plain = Stand.forward.__get__(m)
    eager = None


    def guarded(*a, **k):
        if torch.compiler.is_compiling():
            return eager(*a, **k)
        return plain(*a, **k)


    print(f"plain: {best_us(m, x):.1f} us")
    m.forward = guarded
    print(f"guard, no disable wrapper yet: {best_us(m, x):.1f} us")
    eager = torch.compiler.disable(plain)  # guarded reads it (a closure)
    print(f"guard, a disable wrapper made, not run: {best_us(m, x):.1f} us")
    m.forward = eager
    print(f"disable's wrapper: {best_us(m, x):.1f} us")
    m.forward = guarded
    print(f"guard, after the wrapper ran: {best_us(m, x):.1f} us")
    m.forward = plain
    print(f"plain again: {best_us(m, x):.1f} us")
    t0 = time.perf_counter()
    for _ in range(100000):
        torch.compiler.is_compiling()
    print(f"torch.compiler.is_compiling(): {(time.perf_counter() - t0) / 100000 * 1e6:.2f} us a call")


if __name__ == "__main__":
    main()
