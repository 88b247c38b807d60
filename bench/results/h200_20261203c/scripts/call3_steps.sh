set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 30 ctest --test-dir build-gpu -R LinearCuda --timeout 25 > $R/ctest_linear_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/ctest_linear_$C.txt
timeout 45 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_linear_attention_$C.txt 2>&1; tail -n 3 $R/pytest_linear_attention_$C.txt
TILE_SHAPES=small timeout 20 python3 .carry/exp/tile_probe.py > $R/tile_probe_$C.txt 2>&1; cat $R/tile_probe_$C.txt
timeout 80 python3 bench/attention_layer_bench.py --graphs cora,pubmed --budget-s 65 --json $R/attention_small_$C.json > $R/attention_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_small_$C.txt | tail -n 20
