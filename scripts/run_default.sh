#!/usr/bin/env bash
# `make run`: the main job on the embedded default data set.
set -euo pipefail
BUILD=${1:-build}
shift || true
exec "$BUILD/apps/cli/tessera" inspect sbm "$@"
