set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 100 $T --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]" $R/attention_cuda_test_$C.txt | head -20
timeout 230 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/attention_layer_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
timeout 60 python3 .carry/exp/prof_small.py cora,pubmed 4x64,8x128,2x256 none tessera > $R/prof_small_$C.txt 2>&1; echo rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 python3 -m pytest -q -x tests/python/test_attention.py > $R/pytest_attention_$C.txt 2>&1; tail -n 3 $R/pytest_attention_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
LEFT=$(( 575 - ($(date +%s) - T0) )); [ $LEFT -gt 20 ] && TESSERA_TEST_SMALL=1 timeout $LEFT compute-sanitizer --tool memcheck $T --gtest_filter="AttentionCuda.FusedMatches*:AttentionCuda.LargeWalk*:AttentionCuda.DropoutSym*" > $R/memcheck_attention_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/memcheck_attention_$C.txt
