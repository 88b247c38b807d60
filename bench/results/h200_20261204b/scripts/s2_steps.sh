set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 60 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|Failure|SKIP" $R/linear_test_$C.txt | head
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="LinearCuda.*" > $R/memcheck_linear_$C.txt 2>&1; echo memcheck rc=$?; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck_linear_$C.txt | tail -n 3
timeout 100 python3 bench/results/h200_20261203g/scripts/g_probe.py > $R/probe_$C.txt 2>&1; echo rc=$?; grep -v Warn $R/probe_$C.txt | sed -n '/== forward/,/== dW, db/p'
timeout 60 ncu --clock-control none -k regex:linear_wgmma_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section ComputeWorkloadAnalysis --section SchedulerStats python3 bench/results/h200_20261204/scripts/ncu_wgmma.py > $R/ncu_wgmma_k128_$C.txt 2>&1; echo rc=$?; grep -E "Duration|Throughput|Registers|Warp Cycles|L2 Hit|L1/TEX Hit|Spilling|Eligible|spends|highest-utilized" $R/ncu_wgmma_k128_$C.txt | head -30
timeout 200 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 45
timeout 100 python3 bench/gcn_bench.py --data-dir .carry/data --budget-s 70 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 25 $R/gcn_bench_$C.txt
