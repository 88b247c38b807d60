#!/usr/bin/env bash
# Builds torch-free CUDA binaries here (nvcc 13, sm_90; no GPU needed to compile) and packs them,
# stripped, with the shared libraries the GPU machine lacks (METIS, from Debian), into
# .carry2/bins.tar.xz (.git/info/exclude must list /.carry2/). A device call that carries .carry2 then
# runs them without building, which takes ~170 s of its device time:
#   tar xJf .carry2/bins.tar.xz -C /tmp
#   export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
#   export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)
#   /tmp/bins/tessera_tests --gtest_filter='AttentionCuda.*'
# Usage: bash scripts/pack_prebuilt.sh [BUILD_DIR [TARGET...]]
#   (default: build tessera_tests attention_bench; the build directory must be configured with CUDA).
# The carried tree is capped at 64 MiB; the default two targets pack to about 38 MiB.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
[ $# -gt 0 ] && shift
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(tessera_tests attention_bench)
grep -q "TESSERA_CUDA:BOOL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null ||
  { echo "pack_prebuilt: $BUILD is not a CUDA build (configure with -DTESSERA_CUDA=ON)" >&2; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]}"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir "$STAGE/bins"
for t in "${TARGETS[@]}"; do
  f=$(find "$BUILD" -type f -name "$t" -perm -u+x | head -1)
  [ -n "$f" ] || { echo "pack_prebuilt: no executable $t under $BUILD" >&2; exit 1; }
  cp "$f" "$STAGE/bins/"
done
strip "$STAGE/bins/"*
# The commit the binaries were built from (plus "-dirty" for uncommitted changes): on the GPU machine
# `export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)`, else the benches report the stale checkout there.
dirty=$(git -C "$ROOT" diff --quiet HEAD -- . ':!bench/results' || echo -dirty)
echo "$(git -C "$ROOT" rev-parse HEAD)$dirty" > "$STAGE/bins/COMMIT"
for lib in $(for t in "${TARGETS[@]}"; do ldd "$STAGE/bins/$t"; done | awk '$1 ~ /^libmetis/ {print $3}' | sort -u); do
  cp -L "$lib" "$STAGE/bins/"
done
mkdir -p "$ROOT/.carry2"
# xz -9e: its 64 MiB window finds the code the binaries share (both link tessera_core): 69 -> 38 MiB
# for tessera_tests + attention_bench, where the default level packed each copy anew.
XZ_OPT="-9e -T$(nproc)" tar cJf "$ROOT/.carry2/bins.tar.xz.tmp" -C "$STAGE" bins
mv "$ROOT/.carry2/bins.tar.xz.tmp" "$ROOT/.carry2/bins.tar.xz"
size=$(stat -c %s "$ROOT/.carry2/bins.tar.xz")
echo "packed ${TARGETS[*]} ($(cat "$STAGE/bins/COMMIT")): $((size >> 20)) MiB in .carry2/bins.tar.xz"
[ "$size" -lt $((60 << 20)) ] || echo "pack_prebuilt: over 60 MiB; the device call carries at most 64 MiB in all" >&2
