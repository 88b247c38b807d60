import os
import random
import sys
import zlib

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))  # pyg_reference


@pytest.fixture
def seed(request):
    """A fresh seed per test (printed on failure); TESSERA_TEST_SEED fixes it."""
    base = int(os.environ.get("TESSERA_TEST_SEED", random.randrange(1 << 30)))
    s = (base ^ zlib.crc32(request.node.name.encode())) & 0x7FFFFFFF
    torch.manual_seed(s)
    print(f"seed {s} (TESSERA_TEST_SEED={base})")
    return s
