# session 2026-12-07 (twentieth) call E: the attention kernel asks L2 for the residual row when it
# starts an item (prefetch.global.L2), so the epilogue's read of the skip does not wait for DRAM.
# tessera_tests AttentionCuda.*; pytest test_attention.py; the grid 4x64 Transformer forward, tessera
# alone twice (against calls B, C, C2: 4.58-4.65 ms), then against PyG once. Short: 310 s of device
# time were left. Carry as call B; the working tree must be the commit.
source scripts/device_call.sh
(
set -x
device_build "tessera_torch tessera_tests"
elapsed
timeout 60 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.*' > $R/gtest_attention_cuda_$C.txt 2>&1; echo gtest rc=$?
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]|Failure" $R/gtest_attention_cuda_$C.txt | head -10
timeout 60 python3 -m pytest -q tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 2 $R/pytest_$C.txt
for rep in 1 2; do
  timeout 30 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs grid --hc 4x64 --budget-s 20 --json $R/grid_rep$rep.json > $R/grid_rep$rep.txt 2>&1; echo grid rep$rep rc=$?
done
timeout 40 python3 bench/attention_layer_bench.py --layers transformer --graphs grid --hc 4x64 --budget-s 30 --json $R/grid_pyg.json > $R/grid_pyg.txt 2>&1; echo grid pyg rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|FAILED"
tar xzf $OUT/r.tgz --wildcards -O "r/grid_*.txt" | grep -E "fwd" | cut -c1-200
