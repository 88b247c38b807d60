set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 40 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.*:AttentionLayersCuda.*' > $R/attention_tests_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/attention_tests_$C.txt
timeout 40 python3 -m pytest -q -x tests/python/test_attention.py > $R/pytest_attention_$C.txt 2>&1; tail -n 2 $R/pytest_attention_$C.txt
