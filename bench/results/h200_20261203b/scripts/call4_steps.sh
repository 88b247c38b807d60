set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 60 build-gpu/tests/tessera_tests --gtest_filter='Attention*Cuda*:AttentionCuda*:Linear*' > $R/attention_linear_cuda_tests_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/attention_linear_cuda_tests_$C.txt
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
timeout 150 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --budget-s 125 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
timeout 40 python3 .carry/exp/mem_probe.py > $R/mem_probe_$C.txt 2>&1; echo rc=$?; grep "==" $R/mem_probe_$C.txt
timeout 90 python3 bench/gcn_bench.py --budget-s 60 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/gcn_bench_$C.txt | tail -n 22
