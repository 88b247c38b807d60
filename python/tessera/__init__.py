"""tessera: IO-aware graph learning operators for PyTorch.

    import tessera
    from tessera.nn import GCNConv      # drop-in for torch_geometric.nn.GCNConv

Importing the package loads the op library (see tessera/_loader.py for where it is looked up);
the raw ops are then available as torch.ops.tessera.<name> (also `tessera.ops`).
"""
import torch

from ._loader import load_library

library_path = load_library()
ops = torch.ops.tessera
__version__ = ops.version()

from .graph import Graph, spmm  # noqa: E402  (needs the ops loaded)
from . import nn  # noqa: E402,F401
from . import kernels  # noqa: E402,F401  (tessera.kernels.MarginalizedGraphKernel)

__all__ = ["Graph", "spmm", "ops", "nn", "library_path", "__version__"]
