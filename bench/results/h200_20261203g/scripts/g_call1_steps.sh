set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
grep -i "wgmma.*serializ\|Potential Performance" $R/build.txt | head
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 60 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/linear_test_$C.txt | head -30
timeout 150 python3 .carry/exp/g_probe.py > $R/probe_$C.txt 2>&1; echo rc=$?; cat $R/probe_$C.txt | grep -v Warn
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
F="LinearCuda.EveryVariantMatchesReference"
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$F" > $R/memcheck_linear_$C.txt 2>&1; echo memcheck_rc=$?; tail -n 2 $R/memcheck_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$F" > $R/racecheck_linear_$C.txt 2>&1; echo racecheck_rc=$?; tail -n 2 $R/racecheck_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool synccheck --error-exitcode 9 $T --gtest_filter="$F" > $R/synccheck_linear_$C.txt 2>&1; echo synccheck_rc=$?; tail -n 2 $R/synccheck_linear_$C.txt
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 60 python3 .carry/exp/gap_probe.py > $R/gap_$C.txt 2>&1; echo rc=$?; grep -v Warn $R/gap_$C.txt | head -60
