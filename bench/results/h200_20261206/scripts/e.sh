set -x
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 /tmp/bins/tessera_tests --gtest_filter='AttentionCuda.*:Predict*' 2>&1 | grep -E "OK|FAILED|PASSED|Failure" | tee $OUT/cuda_tests.txt
