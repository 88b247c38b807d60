# session 2026-12-06 (twelfth) call C: the attention layers against PyG on all five graphs at the
# commit with the walks' schedules kept per graph; the attention CUDA tests and pytest against PyG.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
timeout 300 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 260 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 120 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.*:Predict*' > $R/cuda_tests_$C.txt 2>&1; echo tests rc=$?
tail -n 3 $R/cuda_tests_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
L=$(( 570 - ($(date +%s) - T0) ))
timeout $L python3 -m pytest -q tests/python/test_attention.py > $R/pytest_attention_$C.txt 2>&1; echo pytest rc=$?
tail -n 2 $R/pytest_attention_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
grep -v "^wrote" $R/attention_layer_*.txt | cut -c1-250; grep -E "rc=|elapsed|PASSED|FAILED|passed|failed" $R/steps.txt | tail -12
