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
