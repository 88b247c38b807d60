"""PyG-compatible layers on tessera's operators (same constructor arguments, parameter names and
state_dict layout as torch_geometric.nn, so a PyG layer's state_dict loads unchanged)."""
from .gcn import GCNConv

__all__ = ["GCNConv"]
