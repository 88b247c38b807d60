# session 2026-12-06 (tenth) call 4: the final commit's attention CUDA tests from binaries built on
# the development machine (scripts/pack_prebuilt.sh), no build here.
R=$OUT; set -x
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
C=$(cat /tmp/bins/COMMIT)
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 stdbuf -oL /tmp/bins/tessera_tests --gtest_filter='AttentionCuda.*' > $R/cuda_tests_$C.txt 2>&1; echo cuda_tests rc=$?
grep -E "OK \]|FAILED|PASSED|Failure" $R/cuda_tests_$C.txt | head -20
TESSERA_TEST_SMALL=1 timeout 40 stdbuf -oL compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bins/tessera_tests --gtest_filter=AttentionCuda.MultiQueryMatchesReference:AttentionCuda.SharedKeyValueMatchesReference > $R/memcheck_$C.txt 2>&1; echo memcheck rc=$?
grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck_$C.txt | tail -n 2
