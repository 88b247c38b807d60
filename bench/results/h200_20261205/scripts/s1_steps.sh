set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 120 $T --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_$C.txt | head -30
echo elapsed $(( $(date +%s) - T0 ))
timeout 60 python3 .carry/exp/prof_small.py cora,pubmed 4x64,8x128,2x256 none tessera > $R/prof_small_$C.txt 2>&1; echo rc=$?; grep events $R/prof_small_$C.txt
TESSERA_ATTENTION_GRAB=4 timeout 60 python3 .carry/exp/prof_small.py cora,pubmed 4x64,8x128,2x256 none tessera > $R/prof_small_grab4_$C.txt 2>&1; echo rc=$?; grep events $R/prof_small_grab4_$C.txt
timeout 60 python3 .carry/exp/prof_small.py grid 4x64 none tessera > $R/prof_grid_$C.txt 2>&1; echo rc=$?; grep events $R/prof_grid_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
timeout 230 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/attention_layer_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
NCU="ncu --kernel-name regex:forward_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats"
L=$(left 520); [ $L -gt 20 ] && timeout $L $NCU python3 .carry/exp/one_fwd.py grid gatv2 4x64 3 > $R/ncu_grid_gatv2_4x64_$C.txt 2>&1; echo rc=$?
L=$(left 540); [ $L -gt 20 ] && timeout $L $NCU python3 .carry/exp/one_fwd.py cora gatv2 4x64 3 > $R/ncu_cora_gatv2_4x64_$C.txt 2>&1; echo rc=$?
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 575); [ $L -gt 20 ] && TESSERA_TEST_SMALL=1 timeout $L compute-sanitizer --tool memcheck $T --gtest_filter="AttentionCuda.HeadGroups*" > $R/memcheck_attention_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/memcheck_attention_$C.txt
L=$(left 595); [ $L -gt 15 ] && TESSERA_TEST_SMALL=1 timeout $L compute-sanitizer --tool racecheck $T --gtest_filter="AttentionCuda.HeadGroups*" > $R/racecheck_attention_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/racecheck_attention_$C.txt
