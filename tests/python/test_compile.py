"""tessera.nn's layers inside a torch.compile'd model (torch >= 2.3): each layer runs outside the
compiled graph (tessera.nn._compile), so the model compiles around it and gives eager's outputs and
gradients; the layer compiled alone does too. Debian's torch 1.13 has no torch.compile: skipped
there."""
import pytest
import torch

import tessera.nn as tnn
from tessera.nn import _compile

needs_compile = pytest.mark.skipif(
    _compile._is_compiling is None or _compile._disable is None,
    reason=f"torch {torch.__version__} has no torch.compile (2.3 or later): compile tests skipped")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device on this machine: GPU case skipped"))]
LAYERS = {"GCNConv": lambda k: tnn.GCNConv(k, 12), "SAGEConv": lambda k: tnn.SAGEConv(k, 12, aggr="max"),
          "GATv2Conv": lambda k: tnn.GATv2Conv(k, 6, heads=2),
          "TransformerConv": lambda k: tnn.TransformerConv(k, 6, heads=2)}


class Model(torch.nn.Module):
    """A Linear before the layer and a nonlinearity after it: graph pieces for the compiler."""

    def __init__(self, layer, k):
        super().__init__()
        self.pre, self.conv = torch.nn.Linear(k, k), layer

    def forward(self, x, edge_index):
        return torch.nn.functional.elu(self.conv(self.pre(x).relu(), edge_index))


def _run(model, x, edge_index):
    x = x.detach().clone().requires_grad_()
    model.zero_grad(set_to_none=True)
    out = model(x, edge_index)
    out.square().sum().backward()
    return out.detach(), x.grad, [p.grad for p in model.parameters()]


@needs_compile
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(LAYERS))
def test_compiled_model_matches_eager(seed, device, name):
    n, k = 300, 10
    edge_index = torch.randint(0, n, (2, 1500), device=device)
    x = torch.randn(n, k, device=device)
    model = Model(LAYERS[name](k), k).to(device)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager")
    want = _run(model, x, edge_index)
    for _ in range(2):  # the second call runs the cached graphs
        got = _run(compiled, x, edge_index)
        torch.testing.assert_close(got[0], want[0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-5)
        for g, w in zip(got[2], want[2]):
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    layer = LAYERS[name](k).to(device)  # the layer compiled on its own
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(layer, backend="aot_eager")(x, edge_index), layer(x, edge_index))


@needs_compile
def test_outside_tracing_the_forward_is_the_layers_own():
    """The guard keeps forward's name, docstring and signature (PyG's tools inspect forward)."""
    import inspect
    for cls in (tnn.GCNConv, tnn.SAGEConv, tnn.GATv2Conv, tnn.TransformerConv):
        assert cls.forward.__name__ == "forward" and "edge_index" in inspect.signature(cls.forward).parameters


def test_guard_sends_only_tracing_outside_the_graph(monkeypatch):
    """The guard's routing on any torch, with dynamo's two calls stood in: outside tracing the
    forward itself, while tracing the disabled one; name, docstring and signature kept; with
    TESSERA_COMPILE_EAGER=0 (_ON false) the class is left as it is."""
    import inspect
    compiling, outside = [False], []

    def disable(f):
        def run(*a, **k):
            outside.append(1)
            return f(*a, **k)
        return run
    monkeypatch.setattr(_compile, "_is_compiling", lambda: compiling[0])
    monkeypatch.setattr(_compile, "_disable", disable)
    monkeypatch.setattr(_compile, "_ON", True)

    class Layer(torch.nn.Module):
        def forward(self, x, edge_index):
            """doc"""
            return x + 1
    plain = Layer.forward
    Guarded = _compile.eager_under_compile(Layer)
    m = Guarded()
    assert m(torch.ones(2), None).tolist() == [2, 2] and outside == []
    compiling[0] = True
    assert m(torch.ones(2), None).tolist() == [2, 2] and outside == [1]
    assert Guarded.forward.__doc__ == "doc" and list(inspect.signature(Guarded.forward).parameters) == \
        ["self", "x", "edge_index"]
    monkeypatch.setattr(_compile, "_ON", False)

    class Other(torch.nn.Module):
        forward = plain
    assert _compile.eager_under_compile(Other).forward is plain
