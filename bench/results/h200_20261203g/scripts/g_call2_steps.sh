set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 60 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure|SKIP" $R/linear_test_$C.txt | head -30
timeout 100 python3 .carry/exp/g_probe.py > $R/probe_$C.txt 2>&1; echo rc=$?; grep -v Warn $R/probe_$C.txt
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 60 ctest --test-dir build-gpu -R Cuda -E "DenseTiles|Linear" -j 4 --timeout 55 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
timeout 80 python3 -m pytest -q -x tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 190 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 140 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
F="LinearCuda.WeightGradMatchesReference"
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$F" > $R/memcheck_dw_$C.txt 2>&1; echo memcheck_rc=$?; tail -n 2 $R/memcheck_dw_$C.txt
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$F" > $R/racecheck_dw_$C.txt 2>&1; echo racecheck_rc=$?; tail -n 2 $R/racecheck_dw_$C.txt
