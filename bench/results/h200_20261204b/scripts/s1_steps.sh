set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
(cuobjdump -sass -fun regex:linear_wgmma_kernel build-gpu/src/CMakeFiles/tessera_sm90a.dir/cuda/sm90a/linear_wgmma.cu.o 2>&1 || true) > $R/sass_wgmma_$C.txt; grep -c -E "LDL|STL" $R/sass_wgmma_$C.txt; grep -c -E "UTMALDG|UBLKCP" $R/sass_wgmma_$C.txt
timeout 60 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|Failure|SKIP" $R/linear_test_$C.txt | head
timeout 60 python3 -m pytest -q tests/python/test_linear.py > $R/pytest_linear_$C.txt 2>&1; tail -n 2 $R/pytest_linear_$C.txt
timeout 100 python3 bench/results/h200_20261203g/scripts/g_probe.py > $R/probe_$C.txt 2>&1; echo rc=$?; grep -v Warn $R/probe_$C.txt
timeout 60 ncu --clock-control none -k regex:linear_wgmma_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section ComputeWorkloadAnalysis --section SchedulerStats python3 bench/results/h200_20261204/scripts/ncu_wgmma.py > $R/ncu_wgmma_k128_$C.txt 2>&1; echo rc=$?; grep -E "Duration|Throughput|Registers|Stall|Warp Cycles|L2 Hit|Spilling|Eligible|spends" $R/ncu_wgmma_k128_$C.txt | head -30
export TESSERA_TEST_SMALL=1
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="LinearCuda.*" > $R/${tool}_linear_$C.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_linear_$C.txt | tail -n 3
done
unset TESSERA_TEST_SMALL
timeout 200 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 45
