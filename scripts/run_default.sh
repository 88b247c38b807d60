#!/usr/bin/env bash
# `make run`: the main job, `tessera train`, on the embedded default data set (the SBM task), with
# a short epoch budget so it finishes in seconds. Extra arguments go to `tessera train`
# (e.g. `make run RUN_ARGS="--data ../shared/data/cora --epochs 200"`).
set -euo pipefail
BUILD=${1:-build}
shift || true
BIN="$BUILD/apps/cli/tessera"
if ! "$BIN" train --help >/dev/null 2>&1; then
  echo "run_default: this build has no torch layer (LibTorch not found), so 'tessera train' is missing;" >&2
  echo "run_default: showing the default data set's graph instead." >&2
  exec "$BIN" inspect sbm "$@"
fi
exec "$BIN" train --model gcn --data sbm --epochs 50 --patience 0 "$@"
