set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 80 ctest --test-dir build-gpu -R Cuda -E DenseTiles -j 4 --timeout 75 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; tail -n 6 $R/ctest_cuda_$C.txt
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
for L in gatv2 transformer; do
  timeout 45 python3 bench/host_overhead.py --layer $L --width 128 --profile forward+backward --data-dir .carry/data > $R/host_${L}_$C.txt 2>&1; head -n 8 $R/host_${L}_$C.txt
done
GAP_CASES=cora:gatv2,cora:transformer,pubmed:gatv2 timeout 30 python3 .carry/exp/gap_probe.py > $R/gap_probe_$C.txt 2>&1; grep "==" $R/gap_probe_$C.txt
timeout 120 python3 bench/attention_layer_bench.py --graphs cora,pubmed --data-dir .carry/data --budget-s 100 --json $R/attention_small_$C.json > $R/attention_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_small_$C.txt | tail -n 20
