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
#   seconds_left MARGIN [CAP]        the seconds until END (default 560 after T0) less MARGIN, at
#                                    most CAP: a step's timeout that leaves the later steps theirs
#   logged NAME LIMIT CMD [ARG...]   CMD killed after LIMIT s, its output in $R/NAME_$C.txt; prints
#                                    "NAME rc=N" and the output's last 3 lines (a test run's verdict)
#   layer_bench LAYERS NAME LIMIT [ARG...]
#                                    bench/attention_layer_bench.py, LAYERS against PyG on the five
#                                    graphs, into $R/NAME_$C.{json,txt}; killed after LIMIT s,
#                                    starting no configuration after LIMIT - 30; ARGs go last, so
#                                    they override (--graphs, --hc, --no-pyg)
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

seconds_left() {
  local left=$(( ${END:-560} - $1 - ($(date +%s) - T0) ))
  if [ -n "$2" ] && [ "$left" -gt "$2" ]; then left=$2; fi
  echo "$left"
}

logged() {
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" > "$R/${name}_$C.txt" 2>&1
  echo "$name rc=$?"
  tail -n 3 "$R/${name}_$C.txt"
}

layer_bench() {
  local layers=$1 name=$2 limit=$3
  shift 3
  logged "$name" "$limit" python3 bench/attention_layer_bench.py --layers "$layers" \
    --graphs cora,pubmed,grid,rmat,clustered --data-dir "$D" --budget-s $(( limit - 30 )) \
    --json "$R/${name}_$C.json" "$@"
}
