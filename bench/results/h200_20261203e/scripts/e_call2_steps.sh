set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 60 build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.*' > $R/linear_test_$C.txt 2>&1; LRC=$?; echo linear_rc=$LRC; grep -E "OK|FAIL|Failure|err" $R/linear_test_$C.txt | head -20
timeout 70 python3 .carry/exp/wgmma_probe.py > $R/wgmma_probe_$C.txt 2>&1; cat $R/wgmma_probe_$C.txt | grep -v Warn | head -40
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.EveryVariant*' > $R/memcheck_linear_$C.txt 2>&1; tail -n 2 $R/memcheck_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.EveryVariant*' > $R/racecheck_linear_$C.txt 2>&1; tail -n 2 $R/racecheck_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool synccheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.EveryVariant*' > $R/synccheck_linear_$C.txt 2>&1; tail -n 2 $R/synccheck_linear_$C.txt
