set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 60 build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.*' > $R/linear_test_$C.txt 2>&1; echo linear_rc=$?; tail -n 5 $R/linear_test_$C.txt
timeout 70 ctest --test-dir build-gpu -R Cuda -E "DenseTiles|LinearCuda" -j 4 --timeout 60 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 60 python3 .carry/exp/gap_probe.py > $R/gap_$C.txt 2>&1; grep -v Warn $R/gap_$C.txt | head -150
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
ncu --query-metrics 2>/dev/null | grep -i -E "gmma|tensor_op|shared" > $R/ncu_metrics.txt; wc -l $R/ncu_metrics.txt
SECS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats"
timeout 90 ncu --clock-control none $SECS -k regex:linear python3 .carry/exp/ncu_linear.py linear > $R/ncu_linear_$C.txt 2>&1; echo ncu_rc=$?; grep -E "linear_|Duration|Throughput|Issue Slots|Stall|Bank|Pipe" $R/ncu_linear_$C.txt | head -80
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 90 ncu --clock-control none --profile-from-start off $SECS python3 .carry/exp/ncu_linear.py gatv2 > $R/ncu_gatv2_$C.txt 2>&1; echo ncu_rc=$?; grep -E "^  [a-zA-Z_].*\(|Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)" $R/ncu_gatv2_$C.txt | head -120
