set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 30 build-gpu/tests/tessera_torch_tests --gtest_filter="TorchExec*" > $R/torch_exec_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure|SKIP" $R/torch_exec_$C.txt | head
timeout 60 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|Failure|SKIP" $R/linear_test_$C.txt | head
timeout 60 python3 .carry/exp/dw_probe.py > $R/dw_probe_$C.txt 2>&1; echo rc=$?; grep -v Warn $R/dw_probe_$C.txt
timeout 200 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 45
GAP_CASES=pubmed:transformer,pubmed:gatv2 timeout 40 python3 .carry/exp/gap_probe.py > $R/gap_$C.txt 2>&1; echo rc=$?; grep -v Warn $R/gap_$C.txt | head -40
timeout 115 python3 bench/gcn_bench.py --data-dir .carry/data --budget-s 85 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 25 $R/gcn_bench_$C.txt
timeout 60 ctest --test-dir build-gpu -R Cuda -E "DenseTiles" -j 4 --timeout 55 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
