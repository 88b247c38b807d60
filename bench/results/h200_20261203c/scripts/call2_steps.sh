set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 80 ctest --test-dir build-gpu -R Cuda -E DenseTiles -j 4 --timeout 75 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; tail -n 6 $R/ctest_cuda_$C.txt
TESSERA_TEST_SMALL=1 timeout 40 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.EveryVariant*' > $R/memcheck_linear_$C.txt 2>&1; tail -n 2 $R/memcheck_linear_$C.txt
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
timeout 35 python3 .carry/exp/tile_probe.py > $R/tile_probe_$C.txt 2>&1; cat $R/tile_probe_$C.txt
GAP_CASES=pubmed:gatv2,pubmed:transformer timeout 30 python3 .carry/exp/gap_probe.py > $R/gap_probe_$C.txt 2>&1; grep -v Warn $R/gap_probe_$C.txt
timeout 160 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --budget-s 120 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
timeout 110 python3 bench/gcn_bench.py --budget-s 85 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 22 $R/gcn_bench_$C.txt
