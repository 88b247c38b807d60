set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
timeout 80 ctest --test-dir build-gpu -R Cuda -E "DenseTiles" -j 4 --timeout 70 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null

cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 200 python3 bench/attention_layer_bench.py --graphs cora,pubmed,clustered,grid,rmat --data-dir .carry/data --budget-s 150 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
T=build-gpu/tests/tessera_tests
F="AttentionCuda.FusedMatchesReferenceAcrossDtypesWidthsAndKinds:AttentionCuda.DropoutSymmetricAndHeavyRowsMatchReference"
echo "sanitize: $F"

TESSERA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="$F" > $R/racecheck_attention_$C.txt 2>&1; echo racecheck_rc=$?; tail -n 2 $R/racecheck_attention_$C.txt
