set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 20 build-gpu/tests/tessera_tests --gtest_filter='Linear*' > $R/linear_tests_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/linear_tests_$C.txt
timeout 25 python3 -m pytest -q tests/python/test_linear.py > $R/pytest_linear_$C.txt 2>&1; tail -n 2 $R/pytest_linear_$C.txt
timeout 25 python3 .carry/exp/linear_probe_big.py > $R/linear_probe_$C.txt 2>&1; cat $R/linear_probe_$C.txt
timeout 20 python3 bench/attention_layer_bench.py --graphs grid --hc 4x64 --layers transformer --no-pyg --json $R/attention_grid_transformer_$C.json > $R/attention_grid_transformer_$C.txt 2>&1; grep "H=" $R/attention_grid_transformer_$C.txt
timeout 45 python3 bench/gcn_bench.py --graphs grid,cora --widths 256 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 6 $R/gcn_bench_$C.txt
