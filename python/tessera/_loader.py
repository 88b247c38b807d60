"""Finds and loads the tessera op library (libtessera_torch.so) into torch.ops.tessera.

Search order (first hit wins):
  1. $TESSERA_LIBRARY (a path to the .so),
  2. the copy shipped inside this package (tessera/_lib/, put there by `pip install ./python`),
  3. a development build of the repository: <repo>/build*/src/torch/libtessera_torch.so,
     newest first (so `PYTHONPATH=python` works right after `make`).
"""
import glob
import os

import torch

_LIB_NAME = "libtessera_torch.so"
_loaded_path = None


def _candidates():
    env = os.environ.get("TESSERA_LIBRARY")
    if env:
        yield env
        return  # an explicit choice is never silently replaced by another library
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "_lib", _LIB_NAME)
    repo = os.path.dirname(os.path.dirname(here))
    builds = glob.glob(os.path.join(repo, "build*", "src", "torch", _LIB_NAME))
    yield from sorted(builds, key=os.path.getmtime, reverse=True)


def load_library():
    """Loads the op library once; returns its path. Raises ImportError naming what was tried."""
    global _loaded_path
    if _loaded_path is not None:
        return _loaded_path
    tried = []
    for path in _candidates():
        if not os.path.isfile(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            torch.ops.load_library(path)
        except OSError as e:  # built against another torch, missing dependency, ...
            tried.append(f"{path} ({e})")
            continue
        _loaded_path = path
        return path
    raise ImportError(
        "tessera: cannot load the op library " + _LIB_NAME + " (torch " + torch.__version__ + "). Tried:\n  "
        + "\n  ".join(tried)
        + "\nInstall the package with `pip install ./python` from the repository root, build the repository "
        "(`make`), or set TESSERA_LIBRARY to the library's path.")
