set -x
R=$OUT/r
ROOT=$PWD
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
cd .carry/snap
export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 120 $T --gtest_filter="AttentionCuda.*" > $R/attention_cuda_$C.txt 2>&1; ARC=$?; echo attention_cuda rc=$ARC; grep -E "FAILED|PASSED|Failure|OK \]" $R/attention_cuda_$C.txt | head -20
grep -A6 "Failure" $R/attention_cuda_$C.txt | head -40
timeout 60 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_$C.txt 2>&1; echo torch_tests rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_$C.txt | head
TESSERA_TRANSFORMER_FOLD=1 timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_fold_$C.txt 2>&1; echo torch_tests_fold rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_fold_$C.txt | head
if [ $ARC -eq 0 ]; then
timeout 170 python3 bench/transformer_fold_bench.py --device cuda --graphs cora,pubmed,grid,clustered,rmat --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_$C.json > $R/transformer_fold_cuda_$C.txt 2>&1; echo fold rc=$?; grep -v "^wrote" $R/transformer_fold_cuda_$C.txt
TESSERA_ATTENTION_HEAD_GROUPS=0 timeout 60 python3 bench/transformer_fold_bench.py --device cuda --graphs pubmed,grid --hc 8x128,2x256 --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_hg0_$C.json > $R/transformer_fold_cuda_hg0_$C.txt 2>&1; echo fold_hg0 rc=$?; grep -v "^wrote" $R/transformer_fold_cuda_hg0_$C.txt
timeout 45 python3 $ROOT/.carry/exp4/prof_fold.py pubmed,grid 8x128 $ROOT/.carry/data > $R/prof_fold_$C.txt 2>&1; echo prof rc=$?
fi
export TESSERA_TEST_SMALL=1
for tool in memcheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="AttentionCuda.SharedKeyValueMatchesReference" > $R/${tool}_shared_$C.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_shared_$C.txt | tail -n 3
done
