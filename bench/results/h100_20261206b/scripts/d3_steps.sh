set -x
R=/tmp/r
pack() { tar czf $OUT/r.tgz -C /tmp r; cp $R/steps.txt $OUT/steps.txt; }
ROOT=$PWD
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
cd .carry/snap
export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 60 stdbuf -oL $T --gtest_filter="AttentionCuda.MultiQuery*:AttentionCuda.SharedKeyValue*" > $R/cuda_tests_$C.txt 2>&1; ARC=$?; echo cuda_tests rc=$ARC; grep -E "FAILED|PASSED|Failure|OK \]" $R/cuda_tests_$C.txt | head -20
grep -A6 "Failure" $R/cuda_tests_$C.txt | head -30
export TESSERA_TEST_SMALL=1
timeout 30 stdbuf -oL compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_filter=AttentionCuda.MultiQueryMatchesReference > $R/memcheck_multi_query.txt 2>&1; echo memcheck rc=$?; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck_multi_query.txt | tail -n 2
unset TESSERA_TEST_SMALL
pack
timeout 40 python3 -m pytest -q tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 2 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
timeout 40 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_$C.txt 2>&1; echo torch_tests rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_$C.txt | head
pack
if [ $ARC -eq 0 ]; then
timeout 50 python3 bench/transformer_fold_bench.py --device cuda --graphs pubmed,grid --hc 8x128,2x256 --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_$C.json > $R/transformer_fold_cuda_$C.txt 2>&1; echo fold rc=$?; grep -v "^wrote" $R/transformer_fold_cuda_$C.txt
pack
timeout 60 python3 $ROOT/.carry/exp6/mq_ab.py pubmed,grid,clustered 8x128,2x256 $ROOT/.carry/data > $R/mq_ab_$C.txt 2>&1; echo mq_ab rc=$?; cat $R/mq_ab_$C.txt | grep -v Warn
pack
timeout 25 python3 $ROOT/.carry/exp6/prof_fold.py pubmed,grid 8x128 $ROOT/.carry/data > $R/prof_fold_default_$C.txt 2>&1; echo prof rc=$?
grep -E "^==|multi_query|forward_kernel" $R/prof_fold_default_$C.txt | cut -c1-60,150-230
pack
timeout 80 python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,clustered --data-dir $ROOT/.carry/data --budget-s 60 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | grep -v Warning | tail -n 16
pack
fi
export TESSERA_TEST_SMALL=1
timeout 40 stdbuf -oL compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter=AttentionCuda.MultiQueryMatchesReference > $R/racecheck_multi_query.txt 2>&1; echo racecheck rc=$?; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck_multi_query.txt | tail -n 2
pack
