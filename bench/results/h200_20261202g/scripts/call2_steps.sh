set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests tessera" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 25 build-gpu/tests/tessera_tests --gtest_filter='Linear*' > $R/linear_tests_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/linear_tests_$C.txt
timeout 60 python3 bench/gcn_bench.py --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 12 $R/gcn_bench_$C.txt
timeout 45 python3 -m pytest -q tests/python/test_linear.py tests/python/test_gcn.py > $R/pytest_linear_gcn_$C.txt 2>&1; tail -n 2 $R/pytest_linear_gcn_$C.txt
timeout 130 python3 bench/attention_layer_bench.py --budget-s 110 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; tail -n 12 $R/attention_layer_$C.txt
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.*' > $R/memcheck_linear_$C.txt 2>&1; tail -n 2 $R/memcheck_linear_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.*' > $R/racecheck_linear_$C.txt 2>&1; tail -n 2 $R/racecheck_linear_$C.txt
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 2 $R/pytest_$C.txt
(cd build-gpu && timeout 100 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles > $R/ctest_cuda_$C.txt 2>&1); tail -n 4 $R/ctest_cuda_$C.txt
