set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests attention_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
B=build-gpu/bench
echo elapsed $(( $(date +%s) - T0 ))
timeout 120 build-gpu/tests/tessera_tests --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_$C.txt | head -30
for hg in 1 0; do TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout 40 build-gpu/tests/tessera_tests --gtest_filter="AttentionCuda.HeadGroupsMatchReference" > $R/attention_cuda_test_hg${hg}_$C.txt 2>&1; echo hg=$hg rc=$?; grep -E "FAILED|PASSED|Failure" $R/attention_cuda_test_hg${hg}_$C.txt | head; done
timeout 90 build-gpu/tests/tessera_torch_tests --gtest_filter="AttentionLayers*:SAGEConv*:TorchExecCuda*:LayerInputs*" > $R/torch_layers_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|SKIPPED|Failure" $R/torch_layers_test_$C.txt | head -20
echo elapsed $(( $(date +%s) - T0 ))
for hg in 1 -; do TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout 90 $B/attention_bench --device cuda --spec rmat:scale=20,degree=16,seed=1 --hc 4x64,8x128 --kinds transformer --reps 5 --json $R/attention_bench_hg${hg}_$C.json > $R/attention_bench_hg${hg}_$C.txt 2>&1; echo rc=$?; cut -c1-260 $R/attention_bench_hg${hg}_$C.txt; done
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 570); [ $L -gt 60 ] && timeout $L python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir .carry/data --budget-s $(( L - 60 )) --json $R/attention_layer_transformer_$C.json > $R/attention_layer_transformer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_transformer_$C.txt | cut -c1-240
echo elapsed $(( $(date +%s) - T0 ))
