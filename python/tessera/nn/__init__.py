"""PyG-compatible layers on tessera's operators (same constructor arguments, parameter names and
state_dict layout as torch_geometric.nn, so a PyG layer's state_dict loads unchanged)."""
from .gcn import GCNConv
from .gatv2 import GATv2Conv  # noqa: E402
from .transformer import TransformerConv  # noqa: E402

__all__ = ["GCNConv"]
__all__ += ["GATv2Conv", "TransformerConv"]
from .sage import SAGEConv  # noqa: E402
__all__ += ["SAGEConv"]
