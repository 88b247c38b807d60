set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests attention_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
timeout 120 build-gpu/tests/tessera_tests --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_$C.txt | head -30
timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter="AttentionLayers*:TorchExecCuda*" > $R/torch_attention_test_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/torch_attention_test_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 300); timeout $L python3 -m pytest -q -x tests/python/test_attention.py tests/python/test_layer_inputs.py > $R/pytest_attention_$C.txt 2>&1; tail -n 3 $R/pytest_attention_$C.txt; grep -E "^FAILED" $R/pytest_attention_$C.txt | head
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 530); [ $L -gt 60 ] && timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir .carry/data --budget-s $(( L - 70 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | cut -c1-240
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 585); [ $L -gt 20 ] && timeout $L python3 .carry/exp/prof_small.py cora,pubmed 4x64,8x128,2x256 pubmed:gatv2:8x128:tessera tessera > $R/prof_small_$C.txt 2>&1; echo rc=$?; grep events $R/prof_small_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
