set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
bash scripts/gpu_session.sh env > $R/env_stage.txt 2>&1; cat $R/env_stage.txt
eval "$(bash scripts/gpu_session.sh env)"
echo "TESSERA_LIBRARY=$TESSERA_LIBRARY TESSERA_COMMIT=$TESSERA_COMMIT"
timeout 120 build-gpu/tests/tessera_tests --gtest_filter='*Cuda*:*CUDA*:Linear*:GraphKernel*' > $R/cuda_tests_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|SKIPPED \[" $R/cuda_tests_$C.txt | tail -n 8
timeout 110 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
timeout 90 python3 .carry/exp/gap_probe.py > $R/gap_probe_$C.txt 2>&1; cat $R/gap_probe_$C.txt | grep -v Warn
timeout 150 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid --budget-s 120 --json $R/attention_small_$C.json > $R/attention_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_small_$C.txt | tail -n 24
