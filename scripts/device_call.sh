# What every device call's script repeats (bench/results/<folder>/scripts/*.sh, run through the
# device tool from the repository root), sourced at its top:
#   source scripts/device_call.sh   R=$OUT/r (emptied: a reused machine keeps old files), ROOT, C
#                                    (.carry/COMMIT), D (the carried data sets), T0, and $R/gpu.txt
#   device_build TARGETS [TREE]      builds TARGETS for sm_90 in TREE (default the repository, which
#                                    must then be the commit; .carry/snap for a snapshot) through
#                                    scripts/gpu_session.sh into $R/build.txt, stays in TREE and
#                                    exports what running them needs
#   elapsed                          the seconds since T0, for the call's log
#   device_pack                      $R packed into $OUT/r.tgz, one file to fetch
# A call cut short by the device budget returns the files under $R as they are.
export PYTHONUNBUFFERED=1
ROOT=$PWD
R=$OUT/r
rm -rf "$R" && mkdir -p "$R"
C=$(cat .carry/COMMIT 2>/dev/null || git rev-parse HEAD)
D=$ROOT/.carry/data
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$R/gpu.txt" 2>&1

elapsed() { echo "elapsed $(( $(date +%s) - T0 ))"; }

device_build() {
  cd "${2:-$ROOT}" || return 1
  export TESSERA_CARRY=$ROOT/.carry
  BUILD_TARGETS="$1" bash scripts/gpu_session.sh build > "$R/build.txt" 2>&1
  tail -n 3 "$R/build.txt"
  eval "$(bash scripts/gpu_session.sh env)"
}

device_pack() { tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"; }
