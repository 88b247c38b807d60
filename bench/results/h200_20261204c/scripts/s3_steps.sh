set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 100 $T --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]" $R/attention_cuda_test_$C.txt | head -20
timeout 60 python3 .carry/exp/prof_small.py pubmed 4x64,8x128,2x256 none tessera > $R/prof_pubmed_default_$C.txt 2>&1; echo rc=$?
for th in 51 102; do TESSERA_ATTENTION_HEAVY_THRESHOLD=$th timeout 60 python3 .carry/exp/prof_small.py pubmed 4x64,8x128,2x256 none tessera > $R/prof_pubmed_heavy${th}_$C.txt 2>&1; echo rc=$?; done
grep -h events $R/prof_pubmed_*
