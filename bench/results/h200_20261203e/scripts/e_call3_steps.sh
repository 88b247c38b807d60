set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 60 ctest --test-dir build-gpu -R Cuda -E "DenseTiles" -j 4 --timeout 55 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
timeout 75 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 2 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 160 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 135 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 3
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 100 python3 bench/gcn_bench.py --data-dir .carry/data --budget-s 80 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/gcn_bench_$C.txt
