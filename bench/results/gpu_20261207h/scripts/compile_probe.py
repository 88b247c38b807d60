"""Whether tessera.nn's layers run under torch.compile (torch 2.x) and give eager's outputs and
gradients: per layer on CUDA, a random graph, the eager and the compiled (backend aot_eager:
dynamo, fake tensors and AOTAutograd, no code generation) forward+backward, and
torch._dynamo.explain's graph count, break count and first break reasons. A probe (the custom ops
register no fake kernels): it prints what happens, it asserts nothing. Run with
TESSERA_COMPILE_EAGER=0 it sees the layers as they were before tessera.nn._compile; first it times
the host cost of leaving a layer out of the graph, and runs that form inside an inductor-compiled
model."""
import sys
import time
import traceback

import torch

import tessera.nn as tnn


def graph(n, e, dev):
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, n, (2, e), generator=g).to(dev)


def main():
    dev = "cuda"
    n, k = 2000, 64
    ei = graph(n, 20000, dev)
    layers = {"GCNConv": lambda: tnn.GCNConv(k, 64), "SAGEConv": lambda: tnn.SAGEConv(k, 64),
              "GATv2Conv": lambda: tnn.GATv2Conv(k, 16, heads=4),
              "TransformerConv": lambda: tnn.TransformerConv(k, 16, heads=4)}
    for name, make in layers.items():
        torch.manual_seed(0)
        conv = make().to(dev)
        x = torch.randn(n, k, device=dev, requires_grad=True)
        out = conv(x, ei)
        gx, = torch.autograd.grad(out.square().sum(), x)
        try:
            torch._dynamo.reset()
            ex = torch._dynamo.explain(conv)(x, ei)
            reasons = [str(getattr(b, "reason", b)).splitlines()[0][:160] for b in ex.break_reasons[:3]]
            print(f"{name}: explain graphs={ex.graph_count} breaks={ex.graph_break_count} ops={ex.op_count}")
            for r in reasons:
                print(f"  break: {r}")
        except Exception as e:  # noqa: BLE001 (a probe: report and go on)
            print(f"{name}: explain raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        try:
            torch._dynamo.reset()
            compiled = torch.compile(conv, backend="aot_eager")
            t0 = time.perf_counter()
            out_c = compiled(x, ei)
            gx_c, = torch.autograd.grad(out_c.square().sum(), x)
            t1 = time.perf_counter()
            print(f"{name}: compiled ran ({t1 - t0:.1f} s first call); max |out diff| "
                  f"{(out_c - out).abs().max().item():.2e}, max |dx diff| {(gx_c - gx).abs().max().item():.2e}")
            with torch.no_grad():
                y = compiled(x, ei)
            print(f"{name}: compiled no_grad max |diff| {(y - out).abs().max().item():.2e}")
        except Exception as e:  # noqa: BLE001
            print(f"{name}: torch.compile raised {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            traceback.print_exc(limit=4, file=sys.stdout)
        # The fallback if it raises: the layer's forward left out of the compiled graph (run eagerly).
        try:
            torch._dynamo.reset()
            conv.forward = torch.compiler.disable(conv.forward)
            model = torch.nn.Sequential(torch.nn.Linear(k, k).to(dev))
            compiled = torch.compile(lambda x, ei: conv(model(x), ei), backend="aot_eager")
            y = compiled(x, ei)
            want = conv(model(x), ei)
            print(f"{name}: with forward disabled for dynamo, compiled model ran; max |diff| "
                  f"{(y - want).abs().max().item():.2e}")
        except Exception as e:  # noqa: BLE001
            print(f"{name}: disabled forward still raised {type(e).__name__}: {str(e).splitlines()[0][:300]}")


def guarded(fwd):
    """fwd, or under dynamo's tracing the same left out of the graph (a graph break, run eagerly)."""
    eager = torch.compiler.disable(fwd)

    def forward(*a, **k):
        if torch.compiler.is_compiling():
            return eager(*a, **k)
        return fwd(*a, **k)
    return forward


def wrapper_cost():
    """Host cost of the two ways of leaving a layer out of dynamo's graph in eager mode: a no-grad
    TransformerConv 4x16 forward (the one op and its repeats: host-bound) per call, plain, with
    torch.compiler.disable's wrapper and with the is_compiling guard; GPU idle, best of 5 x 2000."""
    n, k = 2000, 64
    ei = graph(n, 20000, "cuda")
    x = torch.randn(n, k, device="cuda")
    conv = tnn.TransformerConv(k, 16, heads=4).cuda()
    plain = conv.forward
    forms = {"plain": plain, "disable": torch.compiler.disable(plain), "guarded": guarded(plain)}
    with torch.no_grad():
        for name, fwd in forms.items():
            conv.forward = fwd
            best = float("inf")
            for _ in range(5):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(2000):
                    conv(x, ei)
                torch.cuda.synchronize()
                best = min(best, (time.perf_counter() - t0) / 2000 * 1e6)
            print(f"eager TransformerConv no-grad call, forward {name}: {best:.1f} us")
    conv.forward = guarded(plain)
    torch._dynamo.reset()
    model = torch.nn.Linear(k, k).cuda()
    compiled = torch.compile(lambda x, ei: conv(model(x), ei))
    try:
        y = compiled(x, ei)
        print(f"guarded forward in a compiled model: max |diff| {(y - conv(model(x), ei)).abs().max().item():.2e}")
    except Exception as e:  # noqa: BLE001
        print(f"guarded forward in a compiled model raised {type(e).__name__}: {str(e).splitlines()[0][:300]}")


if __name__ == "__main__":
    print(torch.__version__)
    wrapper_cost()
    main()
