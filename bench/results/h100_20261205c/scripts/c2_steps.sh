set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 90 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; LRC=$?; echo linear rc=$LRC; grep -E "FAILED|PASSED|Failure|SKIP" $R/linear_test_$C.txt | head -20
grep -A4 "Failure" $R/linear_test_$C.txt | head -30
export TESSERA_TEST_SMALL=1
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="LinearCuda.EveryVariantMatchesReference" > $R/${tool}_linear_$C.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_linear_$C.txt | tail -n 3
done
unset TESSERA_TEST_SMALL
timeout 60 ncu --clock-control none -k regex:resident_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section ComputeWorkloadAnalysis --section SchedulerStats python3 .carry/exp3/ncu_resident.py > $R/ncu_resident_$C.txt 2>&1; echo ncu rc=$?; grep -E "Duration|Throughput|Registers|Stall|Warp Cycles|L2 Hit|Spilling|Eligible|spends|SM Frequency|Pipe" $R/ncu_resident_$C.txt | head -40
if [ $LRC -eq 0 ]; then
timeout 260 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir .carry/data --budget-s 220 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
fi
