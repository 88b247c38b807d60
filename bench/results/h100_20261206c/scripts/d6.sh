# session 2026-12-06 (eleventh) call 6: b6a8679 (cuda.multi_query wherever eligible) from prebuilt
# binaries: every AttentionCuda test and the predict tests on the GPU, and the folded attention alone
# at 2 heads per item with the default choice.
R=$OUT; set -x
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 stdbuf -oL /tmp/bins/tessera_tests --gtest_filter='AttentionCuda.*:Predict*' > $R/tests.txt 2>&1; echo tests rc=$?
grep -E "OK \]|FAILED|PASSED|Failure" $R/tests.txt | cut -c1-120
timeout 40 /tmp/bins/attention_bench --device cuda --spec grid:rows=1024,cols=1024 --hc 2x128,2x256 --shared-kv --reps 10 > $R/bench_grid_default.txt 2>&1; echo bench rc=$?; cut -c1-90 $R/bench_grid_default.txt
