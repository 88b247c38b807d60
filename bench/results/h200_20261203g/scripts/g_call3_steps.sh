set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
CUDA_LAUNCH_BLOCKING=1 timeout 60 python3 .carry/exp/repro.py "rmat:scale=20,degree=16,seed=1" transformer 4x64 2 > $R/repro_blocking.txt 2>&1; echo rc=$?; grep -v Warn $R/repro_blocking.txt | tail -25
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 130 compute-sanitizer --tool memcheck --print-limit 20 python3 .carry/exp/repro.py "rmat:scale=15,degree=16,seed=1" transformer 4x64 1 > $R/memcheck_repro.txt 2>&1; echo rc=$?; grep -v Warn $R/memcheck_repro.txt | head -60
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 120 python3 bench/attention_layer_bench.py --graphs rmat --data-dir .carry/data --budget-s 90 --json $R/attention_layer_rmat_$C.json > $R/attention_layer_rmat_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_rmat_$C.txt | tail -n 20
