set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
timeout 115 python3 bench/gcn_bench.py --data-dir .carry/data --budget-s 85 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; tail -n 25 $R/gcn_bench_$C.txt
timeout 200 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 4
timeout 130 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
