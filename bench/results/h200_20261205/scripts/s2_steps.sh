set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests attention_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 120 $T --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_$C.txt | head -30
timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter="AttentionLayers*:TorchExecCuda*" > $R/torch_attention_test_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/torch_attention_test_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
timeout 230 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/attention_layer_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
timeout 60 python3 .carry/exp/prof_small.py cora,pubmed 4x64,8x128,2x256 pubmed:gatv2:8x128:tessera,pubmed:transformer:8x128:tessera tessera > $R/prof_small_$C.txt 2>&1; echo rc=$?; grep events $R/prof_small_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
for hg in 1 0; do L=$(left 500); [ $L -gt 20 ] && TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout $L build-gpu/bench/attention_bench --device cuda --spec rmat:scale=20,degree=16,seed=1 --hc 4x64,8x128 --reps 5 --json $R/attention_bench_hg${hg}_$C.json > $R/attention_bench_hg${hg}_$C.txt 2>&1; echo rc=$?; cat $R/attention_bench_hg${hg}_$C.txt | cut -c1-250; done
echo elapsed $(( $(date +%s) - T0 ))
for hg in 1 0; do L=$(left 560); [ $L -gt 20 ] && TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout $L python3 bench/attention_layer_bench.py --graphs grid --hc 4x64,8x128 --dtype f16 --no-pyg --budget-s 40 --json $R/attention_layer_f16_hg${hg}_$C.json > $R/attention_layer_f16_hg${hg}_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_f16_hg${hg}_$C.txt; done
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 595); [ $L -gt 15 ] && timeout $L python3 -m pytest -q -x tests/python/test_attention.py tests/python/test_layer_inputs.py > $R/pytest_attention_$C.txt 2>&1; tail -n 3 $R/pytest_attention_$C.txt
