set -x
R=/tmp/r
pack() { tar czf $OUT/r.tgz -C /tmp r; cp $R/steps.txt $OUT/steps.txt; }
ROOT=$PWD
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap
export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests attention_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
T=build-gpu/tests/tessera_tests B=build-gpu/bench/attention_bench
timeout 60 stdbuf -oL $T --gtest_filter="AttentionCuda.MultiQuery*:AttentionCuda.SharedKeyValue*" > $R/cuda_tests_$C.txt 2>&1; ARC=$?; echo cuda_tests rc=$ARC; grep -E "FAILED|PASSED|Failure|OK \]" $R/cuda_tests_$C.txt | head -20
pack
echo elapsed $(( $(date +%s) - T0 ))
if [ $ARC -eq 0 ]; then
L=$(left 470); timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $ROOT/.carry/data --budget-s $(( L - 60 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | cut -c1-250
pack
echo elapsed $(( $(date +%s) - T0 ))
for v in cuda.fused cuda.multi_query; do
  TESSERA_VARIANT_ATTENTION=$v timeout 30 $B --device cuda --spec ba:nodes=19717,m=2 --hc 8x128,2x128,2x256 --shared-kv --reps 20 > $R/bench_ba_$v.txt 2>&1; grep -v "^graph" $R/bench_ba_$v.txt | cut -c1-80
  TESSERA_VARIANT_ATTENTION=$v timeout 30 $B --device cuda --spec grid:rows=1024,cols=1024 --hc 8x128,2x256 --shared-kv --reps 10 > $R/bench_grid_$v.txt 2>&1; grep -v "^graph" $R/bench_grid_$v.txt | cut -c1-80
done
pack
echo elapsed $(( $(date +%s) - T0 ))
fi
export TESSERA_TEST_SMALL=1
for tool in memcheck racecheck; do
  L=$(left 560); [ $L -gt 15 ] && timeout $L compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter=AttentionCuda.MultiQueryMatchesReference > $R/${tool}_multi_query.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_multi_query.txt | tail -n 2
  pack
done
unset TESSERA_TEST_SMALL
L=$(left 590); [ $L -gt 20 ] && timeout $L python3 -m pytest -q -x tests/python/test_attention.py > $R/pytest_attention_$C.txt 2>&1; echo pytest rc=$?; tail -n 3 $R/pytest_attention_$C.txt
pack
echo elapsed $(( $(date +%s) - T0 ))
