set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool memcheck --print-limit 10 python3 .carry/exp/repro.py "rmat:scale=17,degree=16,seed=1" transformer 4x64 1 > $R/memcheck_nocache_rmat17.txt 2>&1; echo rc=$?; grep -v Warn $R/memcheck_nocache_rmat17.txt | grep -v "^=========     \(Host\|Device\) Frame\|^=========         " | head -40
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 45 python3 -m pytest -q tests/python/test_linear.py > $R/pytest_linear_$C.txt 2>&1; tail -n 2 $R/pytest_linear_$C.txt
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
CUDA_LAUNCH_BLOCKING=1 timeout 130 python3 bench/attention_layer_bench.py --graphs rmat --hc 4x64 --data-dir .carry/data --budget-s 100 --json $R/attention_rmat_blocking.json > $R/attention_rmat_blocking.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_rmat_blocking.txt | grep -v "^    \|^  File" | tail -n 25
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool memcheck --print-limit 10 python3 .carry/exp/repro.py "rmat:scale=20,degree=16,seed=1" transformer 4x64 1 > $R/memcheck_nocache_rmat20.txt 2>&1; echo rc=$?; grep -v Warn $R/memcheck_nocache_rmat20.txt | grep -v "^=========     \(Host\|Device\) Frame\|^=========         " | head -40
