set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -i "warn\|error" $R/build.txt | grep -v "^--" | head -20
eval "$(bash scripts/gpu_session.sh env)"
timeout 60 build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.*' > $R/linear_test_$C.txt 2>&1; LRC=$?; echo linear_rc=$LRC; tail -n 30 $R/linear_test_$C.txt | head -40
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 60 python3 .carry/exp/wgmma_probe.py > $R/wgmma_probe_$C.txt 2>&1; cat $R/wgmma_probe_$C.txt | grep -v Warn | head -40
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.EveryVariant*' > $R/memcheck_linear_$C.txt 2>&1; tail -n 2 $R/memcheck_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.EveryVariant*' > $R/racecheck_linear_$C.txt 2>&1; tail -n 2 $R/racecheck_linear_$C.txt
if [ $LRC -ne 0 ]; then export TESSERA_VARIANT_LINEAR=cuda.tf32x3.64x64; echo "wgmma failed: pytest forced to tf32x3.64x64"; fi
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
timeout 60 ctest --test-dir build-gpu -R Cuda -E "DenseTiles|LinearCuda" -j 4 --timeout 55 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
