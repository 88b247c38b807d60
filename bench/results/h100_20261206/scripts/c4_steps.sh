set -x
R=/tmp/r
pack() { tar czf $OUT/r.tgz -C /tmp r; cp $R/steps.txt $OUT/steps.txt; }
ROOT=$PWD
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
cd .carry/snap
export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 150 $T --gtest_filter="AttentionCuda.*:LinearCuda.*" > $R/cuda_tests_$C.txt 2>&1; ARC=$?; echo cuda_tests rc=$ARC; grep -E "FAILED|PASSED|Failure|OK \]" $R/cuda_tests_$C.txt | head -20
grep -A6 "Failure" $R/cuda_tests_$C.txt | head -30
pack
timeout 100 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
timeout 50 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_$C.txt 2>&1; echo torch_tests rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_$C.txt | head
TESSERA_TRANSFORMER_FOLD=1 timeout 50 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_fold_$C.txt 2>&1; echo torch_tests_fold rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_fold_$C.txt | head
pack
export TESSERA_TEST_SMALL=1
for t in LinearCuda.HeadsAndSecondInputMatchReference AttentionCuda.SharedKeyValueMatchesReference; do
  timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter="$t" > $R/memcheck_$t.txt 2>&1; echo memcheck $t rc=$?; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck_$t.txt | tail -n 2
done
unset TESSERA_TEST_SMALL
pack
if [ $ARC -eq 0 ]; then
timeout 70 python3 bench/transformer_fold_bench.py --device cuda --graphs pubmed,grid --hc 8x128,2x256 --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_$C.json > $R/transformer_fold_cuda_$C.txt 2>&1; echo fold rc=$?; grep -v "^wrote" $R/transformer_fold_cuda_$C.txt
pack
timeout 170 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $ROOT/.carry/data --budget-s 130 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
pack
fi
export TESSERA_TEST_SMALL=1
for t in AttentionCuda.SharedKeyValueMatchesReference LinearCuda.HeadsAndSecondInputMatchReference; do
  timeout 40 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$t" > $R/racecheck_$t.txt 2>&1; echo racecheck $t rc=$?; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck_$t.txt | tail -n 2
  pack
done
