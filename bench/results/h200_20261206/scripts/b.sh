# session 2026-12-06 (twelfth) call B: the attention walks' schedules kept per graph. Tests,
# sanitizers, and A/B (TESSERA_ATTENTION_SCHEDULE_CACHE=0 / 1) of the small-graph host path and layer times.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
echo elapsed $(( $(date +%s) - T0 ))
timeout 150 $T --gtest_filter='AttentionCuda.*:Predict*' > $R/cuda_tests_$C.txt 2>&1; echo tests rc=$?
tail -n 4 $R/cuda_tests_$C.txt
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter='AttentionCuda.SchedulesKeptPerGraphMatchReference' > $R/memcheck_schedules.txt 2>&1; echo memcheck rc=$?
tail -n 2 $R/memcheck_schedules.txt
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
for rep in 1; do for cache in 0 1; do
  for spec in "gatv2 4x64 cora" "transformer 4x64 cora"; do
    set -- $spec
    TESSERA_ATTENTION_SCHEDULE_CACHE=$cache timeout 60 python3 bench/host_overhead.py --layer $1 --hc $2 --graph $3 --data-dir $D --width 128 > $R/host_${1}_${3}_cache${cache}_rep$rep.txt 2>&1
    echo "$spec cache=$cache rep=$rep rc=$?"; head -3 $R/host_${1}_${3}_cache${cache}_rep$rep.txt | tail -2
  done
done; done
echo elapsed $(( $(date +%s) - T0 ))
for rep in 1 2; do for cache in 0 1; do
  TESSERA_ATTENTION_SCHEDULE_CACHE=$cache timeout 100 python3 bench/attention_layer_bench.py --graphs cora,pubmed --no-pyg --data-dir $D --budget-s 80 --json $R/layer_small_cache${cache}_rep$rep.json > $R/layer_small_cache${cache}_rep$rep.txt 2>&1
  echo "layer cache=$cache rep=$rep rc=$?"; grep -v "^wrote" $R/layer_small_cache${cache}_rep$rep.txt | cut -c1-110
  echo elapsed $(( $(date +%s) - T0 ))
  [ $(( $(date +%s) - T0 )) -gt 520 ] && break 2
done; done
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
tail -c 9000 $R/steps.txt
