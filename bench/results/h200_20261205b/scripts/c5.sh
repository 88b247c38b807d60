# session 2026-12-05 (fourth) call 5: prebuilt (here, nvcc 13, sm_90) tessera_tests of the head-group default without the Transformer's
# 2-head groups (C = 128): the attention CUDA tests on that default, and head groups forced on.
R=$OUT/r; mkdir -p $R
tar xJf .carry2/bins.tar.xz -C /tmp
d=$(dirname "$(find /usr/local -name 'libcudart.so.13' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=/tmp/bins:$d:${LD_LIBRARY_PATH:-}
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)
ldd /tmp/bins/tessera_tests | grep -E "not found|cudart|metis"
timeout 90 /tmp/bins/tessera_tests --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_default.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_default.txt | head -20
TESSERA_ATTENTION_HEAD_GROUPS=1 timeout 40 /tmp/bins/tessera_tests --gtest_filter="AttentionCuda.HeadGroupsMatchReference" > $R/attention_cuda_test_hg1.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_hg1.txt | head
TESSERA_ATTENTION_HEAD_GROUPS=0 timeout 40 /tmp/bins/tessera_tests --gtest_filter="AttentionCuda.HeadGroupsMatchReference" > $R/attention_cuda_test_hg0.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_hg0.txt | head
cd $OUT && tar czf r.tgz r && rm -rf r
