# session 2026-12-05 (fifth) call 5: the C++ layers' projections on tessera's kernel (4c3eaa4) against a8a9582 (torch's Linear), GPU tests.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(
set -x
C=$(cat .carry/COMMIT)
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv
BUILD_TARGETS="tessera_torch tessera_torch_tests attention_layer_cpp_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -30
(cd .carry/snap && TESSERA_CARRY=$PWD/.. BUILD=build-old BUILD_TARGETS="tessera_torch attention_layer_cpp_bench" bash scripts/gpu_session.sh build > $R/build_old.txt 2>&1; tail -n 3 $R/build_old.txt)
echo elapsed $(( $(date +%s) - T0 ))
eval "$(bash scripts/gpu_session.sh env)"
timeout 120 build-gpu/tests/tessera_torch_tests --gtest_filter="AttentionLayers*:SAGEConv*:TorchExecCuda*:TorchViewsCuda*:GCNConv*" > $R/torch_tests_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|SKIPPED|Failure|max diff" $R/torch_tests_$C.txt | head -20
for spec in grid:rows=1024,cols=1024 rmat:scale=20,degree=16,seed=1; do
  n=${spec%%:*}
  for side in new old; do
    if [ $side = new ]; then B=build-gpu/bench/attention_layer_cpp_bench; T=$C; else B=.carry/snap/build-old/bench/attention_layer_cpp_bench; T=a8a958220b80f0cac60fb25f4312abb6c22774d1; fi
    TESSERA_COMMIT=$T timeout 150 $B --device cuda --spec $spec --hc 4x64,8x128 --edge-dim 0 --reps 7 --json $R/cpp_layer_${n}_${side}.json > $R/cpp_layer_${n}_${side}.txt 2>&1; echo $n $side rc=$?; cat $R/cpp_layer_${n}_${side}.txt
  done
done
echo elapsed $(( $(date +%s) - T0 ))
timeout 100 python3 bench/attention_layer_bench.py --no-pyg --graphs grid --hc 4x64,8x128 --budget-s 80 --json $R/py_layer_grid_$C.json 2>&1 | grep -v "^wrote"
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tail -c 6000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
