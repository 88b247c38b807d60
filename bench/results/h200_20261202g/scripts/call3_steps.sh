set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 25 build-gpu/tests/tessera_tests --gtest_filter='Linear*' > $R/linear_tests_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/linear_tests_$C.txt
for i in 1 2 3; do timeout 40 python3 -m pytest -q tests/python/test_linear.py > $R/pytest_linear_${C}_$i.txt 2>&1; tail -n 1 $R/pytest_linear_${C}_$i.txt; done
timeout 60 python3 -m pytest -q tests/python/test_gcn.py tests/python/test_attention.py > $R/pytest_gcn_attention_$C.txt 2>&1; tail -n 1 $R/pytest_gcn_attention_$C.txt
