"""Every layer's answer to malformed inputs: an error that names the layer and what it expected,
raised before any projection or graph is built (tessera.nn._inputs)."""
import pytest
import torch

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


@pytest.mark.parametrize("cls", LAYERS)
@pytest.mark.parametrize("device,cast", AUTOCAST)
@pytest.mark.parametrize("x_cast", [False, True])
def test_layers_run_under_autocast(seed, cls, device, cast, x_cast):
    # Autocast casts x and the weights alike, so x's type need not be the parameters'. SAGEConv's
    # root term was an in-place addmm_ on the cast output with the uncast x ("self and mat2 must have
    # the same dtype"). The output's type is not checked: PyG's own follows type promotion (its
    # GATv2Conv and GCNConv add an fp32 bias and return fp32), and on CUDA tessera's fp32
    # projections do not follow autocast (README, Python).
    torch.manual_seed(seed)
    n = 40
    edges = torch.randint(0, n, (2, 200), device=device)
    conv = cls(8, 6).to(device)
    x = torch.randn(n, 8, device=device)
    want = conv(x, edges)
    x = (x.to(cast) if x_cast else x).requires_grad_()
    with torch.autocast(device, dtype=cast):
        out = conv(x, edges)
    assert out.dtype in (cast, torch.float32)
    torch.testing.assert_close(out.float(), want, rtol=0.05, atol=0.05 * want.abs().max().item())
    out.float().sum().backward()
    assert x.grad is not None and x.grad.dtype == x.dtype
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in conv.parameters() if p.requires_grad)
