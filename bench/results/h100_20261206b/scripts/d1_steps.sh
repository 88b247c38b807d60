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
timeout 120 $T --gtest_filter="AttentionCuda.*" > $R/cuda_tests_$C.txt 2>&1; ARC=$?; echo cuda_tests rc=$ARC; grep -E "FAILED|PASSED|Failure|OK \]" $R/cuda_tests_$C.txt | head -20
grep -A6 "Failure" $R/cuda_tests_$C.txt | head -30
pack
timeout 100 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
timeout 50 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:AttentionLayers*' > $R/torch_tests_$C.txt 2>&1; echo torch_tests rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_$C.txt | head
pack
export TESSERA_TEST_SMALL=1
for tool in memcheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter=AttentionCuda.MultiQueryMatchesReference > $R/${tool}_multi_query.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_multi_query.txt | tail -n 2
  pack
done
unset TESSERA_TEST_SMALL
if [ $ARC -eq 0 ]; then
timeout 110 python3 bench/transformer_fold_bench.py --device cuda --graphs cora,pubmed,grid,clustered,rmat --hc 8x128,2x256 --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_$C.json > $R/transformer_fold_cuda_$C.txt 2>&1; echo fold rc=$?; grep -v "^wrote" $R/transformer_fold_cuda_$C.txt
pack
TESSERA_VARIANT_ATTENTION=cuda.fused timeout 60 python3 bench/transformer_fold_bench.py --device cuda --graphs pubmed,grid --hc 8x128,2x256 --data-dir $ROOT/.carry/data --json $R/transformer_fold_cuda_fused_$C.json > $R/transformer_fold_cuda_fused_$C.txt 2>&1; echo fold_fused rc=$?; grep -v "^wrote" $R/transformer_fold_cuda_fused_$C.txt
pack
for v in default cuda.fused; do
  if [ $v = default ]; then unset TESSERA_VARIANT_ATTENTION; else export TESSERA_VARIANT_ATTENTION=$v; fi
  timeout 40 python3 $ROOT/.carry/exp6/prof_fold.py pubmed,grid 8x128,2x256 $ROOT/.carry/data > $R/prof_fold_${v}_$C.txt 2>&1; echo prof $v rc=$?
  unset TESSERA_VARIANT_ATTENTION
  pack
done
timeout 100 python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,clustered --data-dir $ROOT/.carry/data --budget-s 80 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 20
pack
fi
