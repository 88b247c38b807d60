import faulthandler
import os
import random
import sys
import zlib

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))  # pyg_reference

# A crash in native code (a segfault in an op) prints the Python stack of every thread, even when
# pytest runs with -p no:faulthandler.
if not faulthandler.is_enabled():
    faulthandler.enable()


def pytest_runtest_logstart(nodeid, location):
    """Names each test on stderr before it runs when TESSERA_PYTEST_TRACE=1, so a crash that kills
    the interpreter is attributable even under -q."""
    if os.environ.get("TESSERA_PYTEST_TRACE") == "1":
        sys.stderr.write(f"\n[start] {nodeid}\n")
        sys.stderr.flush()


def pytest_runtest_logreport(report):
    """Prints a failure's report as soon as it happens, not only in the final summary: if a later
    test crashes the interpreter, the summary is never printed and the reason would be lost."""
    if report.failed:
        sys.stderr.write(f"\n[FAILED {report.when}] {report.nodeid}\n{report.longreprtext}\n")
        sys.stderr.flush()


@pytest.fixture
def seed(request):
    """A fresh seed per test (printed on failure); TESSERA_TEST_SEED fixes it."""
    base = int(os.environ.get("TESSERA_TEST_SEED", random.randrange(1 << 30)))
    s = (base ^ zlib.crc32(request.node.name.encode())) & 0x7FFFFFFF
    torch.manual_seed(s)
    print(f"seed {s} (TESSERA_TEST_SEED={base})")
    return s
