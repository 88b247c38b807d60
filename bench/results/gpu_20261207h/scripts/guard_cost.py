"""Call B: the host cost of a no-grad TransformerConv call (GPU idle, best of 5 x 2000) with its
forward plain, behind torch.compiler.disable's wrapper, behind an is_compiling guard, and plain
again, in that order in one process: call A measured the guard as slow as disable's wrapper (54 against
35.7 us), after disable's wrapper had run. Argument "package": the layer as tessera.nn ships it
(the class guard of tessera.nn._compile) against the plain forward."""
import sys
import time

import torch

import tessera.nn as tnn


def best_us(conv, x, ei):
    best = float("inf")
    with torch.no_grad():
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(2000):
                conv(x, ei)
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / 2000 * 1e6)
    return best


def main():
    n, k = 2000, 64
    ei = torch.randint(0, n, (2, 20000), generator=torch.Generator().manual_seed(1)).cuda()
    x = torch.randn(n, k, device="cuda")
    conv = tnn.TransformerConv(k, 16, heads=4).cuda()
    cls_forward = type(conv).forward.__get__(conv)
    if sys.argv[1:] == ["package"]:
        print(f"package forward (guard {'on' if cls_forward.__wrapped__ else 'off'}): {best_us(conv, x, ei):.1f} us")
        conv.forward = cls_forward.__wrapped__.__get__(conv)
        print(f"its unguarded forward: {best_us(conv, x, ei):.1f} us")
        print(f"package forward again: {best_us(tnn.TransformerConv(k, 16, heads=4).cuda(), x, ei):.1f} us")
        return
    plain = cls_forward
    eager = None

    def guarded(*a, **kw):
        if torch.compiler.is_compiling():
            return eager(*a, **kw)
        return plain(*a, **kw)
    print(f"plain: {best_us(conv, x, ei):.1f} us")
    conv.forward = guarded
    print(f"guard, before any disable wrapper exists: {best_us(conv, x, ei):.1f} us")
    eager = torch.compiler.disable(plain)
    conv.forward = guarded
    print(f"guard, a disable wrapper made, not run: {best_us(conv, x, ei):.1f} us")
    conv.forward = eager
    print(f"disable's wrapper: {best_us(conv, x, ei):.1f} us")
    conv.forward = guarded
    print(f"guard, after the wrapper ran: {best_us(conv, x, ei):.1f} us")
    conv.forward = plain
    print(f"plain again: {best_us(conv, x, ei):.1f} us")


if __name__ == "__main__":
    main()
