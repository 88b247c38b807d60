set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 100 build-gpu/tests/tessera_tests --gtest_filter='Attention*Cuda*:AttentionCuda*:Linear*' > $R/attention_linear_cuda_tests_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/attention_linear_cuda_tests_$C.txt
timeout 80 python3 -m pytest -q tests/python/test_attention.py tests/python/test_linear.py > $R/pytest_attention_linear_$C.txt 2>&1; tail -n 3 $R/pytest_attention_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 70 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.DropoutSymmetricAndHeavyRowsMatchReference:AttentionCuda.FusedMatchesReference*:LinearCuda.*' > $R/memcheck_attention_linear_$C.txt 2>&1; tail -n 2 $R/memcheck_attention_linear_$C.txt
timeout 170 python3 bench/attention_layer_bench.py --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
timeout 100 python3 .carry/exp/small_probe.py > $R/small_probe_$C.txt 2>&1; echo rc=$?; head -n 30 $R/small_probe_$C.txt
