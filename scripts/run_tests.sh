#!/usr/bin/env bash
# The whole test suite: C++ (ctest) and Python (pytest when the torch layer is built).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/$BUILD"
ctest --output-on-failure -j "$(nproc)" --timeout 900
cd "$ROOT"
if [ -f "$BUILD/src/torch/libtessera_torch.so" ] && [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then
  export TESSERA_LIBRARY="$ROOT/$BUILD/src/torch/libtessera_torch.so"
  export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
  /usr/bin/python3 -m pytest -q tests/python
fi
