"""Every layer's answer to malformed inputs: an error that names the layer and what it expected,
raised before any projection or graph is built (tessera.nn._inputs)."""
import pytest
import torch

import tessera.nn._linear
from tessera.nn import GATv2Conv, GCNConv, SAGEConv, TransformerConv

LAYERS = [GCNConv, SAGEConv, GATv2Conv, TransformerConv]
EDGES = torch.tensor([[0, 1, 2], [1, 2, 3]])


@pytest.mark.parametrize("cls", LAYERS)
def test_node_features_of_the_wrong_shape_are_named(cls):
    conv, name = cls(4, 3), cls.__name__
    with pytest.raises(ValueError, match=f"{name}: x has 7 features per node, but the layer was built for "
                                         "in_channels = 4"):
        conv(torch.randn(5, 7), EDGES)
    with pytest.raises(ValueError, match=rf"{name}: x must be a 2-D \[nodes, features\] tensor, got shape \(5,\)"):
        conv(torch.randn(5), EDGES)
    with pytest.raises(TypeError, match=f"{name}: x must be a tensor, got list"):
        conv([[0.0] * 4] * 5, EDGES)
    assert conv(torch.randn(5, 4), EDGES).shape == (5, 3)  # and the well-formed call still runs


@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
def test_bipartite_inputs_are_checked_per_side(cls):
    conv, name = cls((3, 5), 2, heads=2), cls.__name__
    with pytest.raises(ValueError, match=rf"{name}: x\[1\] \(targets\) has 3 features per node, but the layer "
                                         "was built for in_channels = 5"):
        conv((torch.randn(6, 3), torch.randn(6, 3)), EDGES)
    with pytest.raises(ValueError, match=rf"{name}: x\[0\] \(sources\) has 5 features"):
        conv((torch.randn(6, 5), torch.randn(6, 5)), EDGES)
    with pytest.raises(ValueError, match=rf"{name}: built for bipartite input .* pass x = \(x_src, x_dst\)"):
        conv(torch.randn(6, 3), EDGES)
    with pytest.raises(ValueError, match=rf"{name}: x must be a tensor or a pair \(x_src, x_dst\), got a tuple of 3"):
        conv((torch.randn(6, 3),) * 3, EDGES)
    assert conv((torch.randn(6, 3), torch.randn(6, 5)), EDGES).shape == (6, 4)


@pytest.mark.parametrize("cls", LAYERS)
def test_edge_index_of_the_wrong_shape_is_named(cls):
    # GATv2Conv checks it itself: its self-loops are added before the CSR is built.
    with pytest.raises((ValueError, RuntimeError), match=r"edge_index must have shape \[2, E\] .* got \[3, 2\]"):
        cls(4, 3)(torch.randn(5, 4), torch.zeros(3, 2, dtype=torch.long))


@pytest.mark.parametrize("cls", LAYERS)
def test_node_features_of_the_wrong_type_or_device_are_named(cls):
    # Without these checks torch's own operands are named ("mat1 and mat2 must have the same dtype",
    # "addmm_impl_cpu_ not implemented for 'Bool'"), or a tessera op's ("segment_reduce: x must be ...").
    conv, name = cls(4, 3), cls.__name__
    for dtype in (torch.long, torch.int32, torch.bool):
        with pytest.raises(TypeError, match=rf"{name}: x must be a floating-point tensor, got {dtype} "
                                            r"\(convert it with x.float\(\)\)"):
            conv(torch.ones(5, 4, dtype=dtype), EDGES)
    with pytest.raises(TypeError, match=f"{name}: x is torch.float64 but the layer's parameters are torch.float32"):
        conv(torch.randn(5, 4, dtype=torch.float64), EDGES)
    with pytest.raises(ValueError, match=f"{name}: x is on meta but the layer's parameters are on cpu"):
        conv(torch.randn(5, 4, device="meta"), EDGES)
    assert conv.double()(torch.randn(5, 4, dtype=torch.float64), EDGES).dtype == torch.float64


@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
def test_bipartite_node_features_of_the_wrong_type_are_named_per_side(cls):
    conv, name = cls((3, 5), 2, heads=2), cls.__name__
    with pytest.raises(TypeError, match=rf"{name}: x\[1\] \(targets\) must be a floating-point tensor, got "
                                        r"torch.int64 \(convert it with x\[1\].float\(\)\)"):
        conv((torch.randn(6, 3), torch.ones(6, 5, dtype=torch.long)), EDGES)
    with pytest.raises(TypeError, match=rf"{name}: x\[0\] \(sources\) is torch.float64"):
        conv((torch.randn(6, 3, dtype=torch.float64), torch.randn(6, 5)), EDGES)


AUTOCAST = [("cpu", torch.bfloat16), pytest.param("cuda", torch.float16, marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: CUDA autocast runs on the GPU machine"))]


# The layers as built for the autocast test: each class at C < K, and TransformerConv at C > K,
# where it would take its folded form (CPU: always; CUDA: on large graphs without autograd).
AUTOCAST_LAYERS = {"GCNConv": lambda: GCNConv(8, 6), "SAGEConv": lambda: SAGEConv(8, 6),
                   "GATv2Conv": lambda: GATv2Conv(8, 6, heads=2),
                   "TransformerConv": lambda: TransformerConv(8, 6, heads=2),
                   "TransformerConv-wide": lambda: TransformerConv(8, 12, heads=2)}


@pytest.mark.parametrize("make", list(AUTOCAST_LAYERS.values()), ids=list(AUTOCAST_LAYERS))
@pytest.mark.parametrize("device,cast", AUTOCAST)
@pytest.mark.parametrize("x_cast", [False, True])
@pytest.mark.parametrize("grad", [True, False])
def test_layers_follow_autocast(seed, monkeypatch, make, device, cast, x_cast, grad):
    # Autocast casts x and the weights alike, so x's type need not be the parameters'. The layers
    # leave their projections to torch's Linear there, which computes them in autocast's type:
    # tessera's own (CUDA's fp32 kernel, the CPU's one op for large outputs, here for any size) are
    # not cast. So the output is in autocast's type too (PyG's GATv2Conv and GCNConv return fp32
    # there: their bias add promotes). Caught before: SAGEConv's root term, an in-place addmm_ on
    # the cast output with the uncast x ("self and mat2 must have the same dtype"); the folded
    # TransformerConv, whose keys are x itself ("key is float32 but query is bfloat16").
    monkeypatch.setattr(tessera.nn._linear, "_MIN_BYTES", 0)
    torch.manual_seed(seed)
    n = 40
    edges = torch.randint(0, n, (2, 200), device=device)
    conv = make().to(device)
    x = torch.randn(n, 8, device=device)
    with torch.no_grad():
        want = conv(x, edges)
    x = (x.to(cast) if x_cast else x).requires_grad_(grad)
    with torch.set_grad_enabled(grad), torch.autocast(device, dtype=cast):
        out = conv(x, edges)
    assert out.dtype == cast
    torch.testing.assert_close(out.float(), want, rtol=0.05, atol=0.05 * want.abs().max().item())
    if grad:
        out.float().sum().backward()
        assert x.grad is not None and x.grad.dtype == x.dtype
        assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in conv.parameters() if p.requires_grad)


@pytest.mark.parametrize("cls", [GATv2Conv, TransformerConv])
def test_edge_features_of_the_wrong_shape_or_type_are_named(cls):
    # They were named by the kernels' own checks ("attention: edge_weight has 3 columns, expected
    # edge_attr's columns = 2", "spmm: x must be float32 ...") or not at all.
    conv, name, x = cls(4, 3, heads=2, edge_dim=3), cls.__name__, torch.randn(5, 4)
    with pytest.raises(ValueError, match=f"{name}: edge_attr has 2 features per edge, but the layer was built for "
                                         "edge_dim = 3"):
        conv(x, EDGES, torch.randn(3, 2))
    with pytest.raises(ValueError, match=f"{name}: edge_attr has 4 rows but edge_index has 3 edges"):
        conv(x, EDGES, torch.randn(4, 3))
    with pytest.raises(ValueError, match=rf"{name}: edge_attr must be a \[edges, edge_dim\] tensor, "
                                         r"got shape \(3, 3, 1\)"):
        conv(x, EDGES, torch.randn(3, 3, 1))
    with pytest.raises(TypeError, match=rf"{name}: edge_attr must be a floating-point tensor, got torch.int64 "
                                        r"\(convert it with edge_attr.float\(\)\)"):
        conv(x, EDGES, torch.ones(3, 3, dtype=torch.long))
    with pytest.raises(TypeError, match=f"{name}: edge_attr must be a tensor, got list"):
        conv(x, EDGES, [[0.0] * 3] * 3)
    with pytest.raises(ValueError, match=f"{name}: edge_attr is on meta but the layer's parameters are on cpu"):
        conv(x, EDGES, torch.randn(3, 3, device="meta"))
    with pytest.raises(ValueError, match=f"{name}: edge_attr given but the layer was built without edge_dim|"
                                         f"{name}: edge_attr must be given exactly when the layer has edge_dim"):
        cls(4, 3)(x, EDGES, torch.randn(3, 3))
    assert conv(x, EDGES, torch.randn(3, 3)).shape == (5, 6)  # and the well-formed call still runs
    assert cls(4, 3, edge_dim=1)(x, EDGES, torch.randn(3)).shape == (5, 3)  # [E]: one feature per edge
