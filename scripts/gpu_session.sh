#!/usr/bin/env bash
# The GPU-machine script: configures against that machine's torch, builds for sm_90, runs the GPU
# tests (and compute-sanitizer on them), the Python tests and the benchmarks, and writes logs and
# JSON under $OUT. Run through the device tool from the repository root, carrying .carry/
# (Debian packages unpacked into .carry/root — never into / — and a GoogleTest source tree):
#   bash scripts/gpu_session.sh [stages...]      stages: build test cputest sanitize pytest bench (default: all but cputest)
#   eval "$(bash scripts/gpu_session.sh env)"   the exports for running what a build made, by hand
# Prepare .carry here once: see scripts/prepare_carry.sh. Before each device call, refresh the
# commit it reports (`git rev-parse HEAD > .carry/COMMIT`); to run exactly a commit while the
# tree has uncommitted work, carry a snapshot: `git archive HEAD | tar -x -C .carry/snap` and run
# this script from .carry/snap with TESSERA_CARRY pointing at .carry.
# A hand-written device call's script sources scripts/device_call.sh for the preamble every call repeats.
# Short of device time: scripts/pack_prebuilt.sh builds the torch-free test and bench binaries here
# and packs them for a call that runs them without this script's build stage.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/tessera-gpu-out}
mkdir -p "$OUT/json"
LOG="$OUT/log.txt"
BUILD=${BUILD:-build-gpu}
case "$BUILD" in /*) BUILD_ABS=$BUILD ;; *) BUILD_ABS=$ROOT/$BUILD ;; esac
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(build test sanitize pytest bench)
# Only named benchmarks when BENCHES is set (space-separated basenames without extension).
want() { local s; for s in "${STAGES[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
SUMMARY=()
# The commit: .carry/COMMIT when present (written by prepare_carry.sh; the device copy of the tree may
# sit inside a stale git checkout, whose HEAD a benchmark would otherwise report), else git.
COMMIT=$(cat "${TESSERA_CARRY:-$ROOT/.carry}/COMMIT" 2>/dev/null || git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
export TESSERA_COMMIT=$COMMIT  # read by the benchmarks' provenance (bench_common.{py,hpp}), also when run by hand after
# Every benchmark JSON carries date, commit, device and the command that produced it.
stamp_json() {  # stamp_json FILE COMMAND...
  local f=$1; shift
  [ -f "$f" ] || return 0
  python3 - "$f" "$COMMIT" "$*" <<'PY'
import json, sys, datetime, subprocess
path, commit, command = sys.argv[1:4]
d = json.load(open(path))
if isinstance(d, dict):
    dev = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    d.setdefault("date", datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    if commit != "unknown":
        d["commit"] = commit  # benchmarks that ask git on the device can read a stale checkout
    d.setdefault("commit", commit)
    d.setdefault("device", dev)
    d.setdefault("command", command)
    json.dump(d, open(path, "w"), indent=1)
PY
}
stage() {  # stage NAME TIMEOUT CMD...: runs with a time limit, logs, records the outcome
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  echo "=== [$name] $*" | tee -a "$LOG"
  timeout "$limit" "$@" >>"$LOG" 2>&1
  local rc=$?
  SUMMARY+=("$(printf '%-28s rc=%-4s %4ss' "$name" "$rc" "$(( $(date +%s) - t0 ))")")
  echo "=== [$name] rc=$rc" | tee -a "$LOG"
  return $rc
}

# Carried Debian packages (METIS, zlib headers, CLI11, nlohmann-json).
DEPS="${TESSERA_CARRY:-$ROOT/.carry}"
if [ -d "$DEPS/debs" ]; then
  mkdir -p "$DEPS/root"
  for d in "$DEPS"/debs/*.deb; do dpkg -x "$d" "$DEPS/root"; done
  # zlib comes from the system (a shared object); the carried package only supplies headers.
  rm -f "$DEPS/root/usr/lib/x86_64-linux-gnu/libz.a" "$DEPS/root/usr/lib/x86_64-linux-gnu/libz.so"
fi
# Data sets carried along (../shared does not travel): tests and benchmarks read TESSERA_SHARED_DATA.
[ -d "$DEPS/data" ] && export TESSERA_SHARED_DATA="$DEPS/data"
export LD_LIBRARY_PATH="$DEPS/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# `env` alone: the exports that a hand-written step needs to run what a build stage made (tests,
# benchmarks, probes), printed for  eval "$(bash scripts/gpu_session.sh env)"  and nothing else.
if [ "${STAGES[*]}" = env ]; then
  printf 'export %s=%q\n' TESSERA_COMMIT "$COMMIT" LD_LIBRARY_PATH "$LD_LIBRARY_PATH" \
    TESSERA_LIBRARY "$BUILD_ABS/src/torch/libtessera_torch.so" PYTHONPATH "$ROOT/python"
  [ -n "${TESSERA_SHARED_DATA:-}" ] && printf 'export TESSERA_SHARED_DATA=%q\n' "$TESSERA_SHARED_DATA"
  exit 0
fi
TORCH_PREFIX=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $COMMIT";
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader;
  python3 -c 'import torch;print("torch", torch.__version__, torch.version.cuda)';
  python3 -c 'import torch_geometric;print("pyg", torch_geometric.__version__)' 2>&1 | tail -1;
  nvcc --version | tail -1; } | tee -a "$LOG"

ZLIB_ARGS=()
if [ ! -f /usr/include/zlib.h ] || [ ! -e /usr/lib/x86_64-linux-gnu/libz.so ]; then
  libz=$(ldconfig -p | awk '/libz\.so\.1 /{print $NF; exit}')
  zinc=/usr/include; [ -f /usr/include/zlib.h ] || zinc="$DEPS/root/usr/include"
  ZLIB_ARGS=(-DZLIB_INCLUDE_DIR="$zinc" -DZLIB_LIBRARY="$libz" -DZLIB_LIBRARY_RELEASE="$libz")
else
  ZLIB_ARGS=(-DZLIB_INCLUDE_DIR=/usr/include -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so -DZLIB_LIBRARY_RELEASE=/usr/lib/x86_64-linux-gnu/libz.so)
fi

if want build; then
  stage configure 300 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSERA_CUDA_ARCH=90 -DCMAKE_PREFIX_PATH="$DEPS/root/usr;$TORCH_PREFIX" \
    -DTESSERA_GTEST_SOURCE="$DEPS/googletest" "${ZLIB_ARGS[@]}" \
    -DMETIS_INCLUDE_DIR="$DEPS/root/usr/include" \
    -DMETIS_LIBRARY="$DEPS/root/usr/lib/x86_64-linux-gnu/libmetis.so"
  # BUILD_TARGETS (space-separated) builds only those, e.g. tessera_torch for an A/B library.
  stage build 900 cmake --build "$BUILD" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} ||
    { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
fi

T="$BUILD/tests/tessera_tests"
if want test; then
  # One process per test (ctest), so a sticky CUDA error in one test cannot fail the others.
  stage gpu-tests 900 ctest --test-dir "$BUILD" -R 'Cuda' -j 4 --output-on-failure --timeout 300 \
    --output-junit "$OUT/json/gpu_tests.xml"
fi
if want cputest; then
  stage cpu-tests 900 ctest --test-dir "$BUILD" -j 8 --output-on-failure --timeout 600
fi
if want sanitize; then
  # memcheck and racecheck on every CUDA test, one process each; TESSERA_TEST_SMALL lets tests shrink.
  export TESSERA_TEST_SMALL=1
  cuda_tests=$("$T" --gtest_list_tests --gtest_filter="${SANITIZE_FILTER:-*Cuda*}" | awk '/^[^ ]/{s=$1} /^  /{print s $1}')
  for tool in memcheck racecheck; do
    for t in $cuda_tests; do
      stage "$tool:$t" "${SANITIZE_LIMIT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 9 "$T" --gtest_filter="$t"
    done
  done
  unset TESSERA_TEST_SMALL
fi
if want pytest; then
  export TESSERA_LIBRARY="$BUILD_ABS/src/torch/libtessera_torch.so" PYTHONPATH="$ROOT/python"
  stage pytest 900 python3 -X faulthandler -m pytest -v -rs tests/python
fi
if want bench; then
  for b in "$BUILD"/bench/*_bench; do
    [ -x "$b" ] || continue
    n=$(basename "$b")
    [ -n "${BENCHES:-}" ] && [[ " $BENCHES " != *" $n "* ]] && continue
    stage "$n" "${BENCH_LIMIT:-240}" "$b" --json "$OUT/json/$n.json"
    stamp_json "$OUT/json/$n.json" "$b" --json "$n.json"
  done
  export TESSERA_LIBRARY="$BUILD_ABS/src/torch/libtessera_torch.so" PYTHONPATH="$ROOT/python"
  for b in bench/*_bench.py; do
    [ -f "$b" ] || continue
    case "$b" in *cpu_bench.py) continue;; esac
    n=$(basename "$b" .py)
    [ -n "${BENCHES:-}" ] && [[ " $BENCHES " != *" $n "* ]] && continue
    stage "$n" "${BENCH_LIMIT:-240}" python3 "$b" --json "$OUT/json/$n.json"
    stamp_json "$OUT/json/$n.json" python3 "$b" --json "$n.json"
  done
  # The attention layers again with edge features (edge_dim 8): fused kernels against PyG's E x H x C path.
  n=attention_layer_bench_edge8
  if [ -z "${BENCHES:-}" ] || [[ " $BENCHES " == *" $n "* ]]; then
    stage "$n" "${BENCH_LIMIT:-240}" python3 bench/attention_layer_bench.py --edge-dim 8 --hc 4x64 --json "$OUT/json/$n.json"
    stamp_json "$OUT/json/$n.json" python3 bench/attention_layer_bench.py --edge-dim 8 --hc 4x64 --json "$n.json"
  fi
fi

tar -czf "$OUT/json.tar.gz" -C "$OUT" json 2>/dev/null && rm -rf "$OUT/json"
echo "==== summary ====" | tee -a "$LOG"
printf '%s\n' "${SUMMARY[@]}" | tee -a "$LOG"
