set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 240); timeout $L python3 -m pytest -q tests/python/test_attention.py tests/python/test_layer_inputs.py tests/python/test_sage.py tests/python/test_gcn.py > $R/pytest_$C.txt 2>&1; tail -n 5 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 310); [ $L -gt 60 ] && timeout $L python3 bench/gcn_bench.py --widths 256 --graphs pubmed,cora,grid,clustered,rmat --data-dir .carry/data --budget-s $(( L - 40 )) --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; cut -c1-250 $R/gcn_bench_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
