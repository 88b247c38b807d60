set -x
R=$OUT/r
ROOT=$PWD
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
cd .carry/snap
export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
timeout 150 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 8 $R/pytest_$C.txt
timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_$C.txt 2>&1; echo torch_tests rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_$C.txt | head
TESSERA_TRANSFORMER_FOLD=1 timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_fold_$C.txt 2>&1; echo torch_tests_fold rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_fold_$C.txt | head
timeout 200 python3 bench/transformer_fold_bench.py --device cuda --graphs cora,pubmed,grid,clustered,rmat --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_$C.json > $R/transformer_fold_cuda_$C.txt 2>&1; echo fold rc=$?; cat $R/transformer_fold_cuda_$C.txt | grep -v "^wrote"
timeout 60 python3 $ROOT/.carry/exp4/prof_fold.py pubmed,grid 8x128,2x256 $ROOT/.carry/data > $R/prof_fold_$C.txt 2>&1; echo prof rc=$?
