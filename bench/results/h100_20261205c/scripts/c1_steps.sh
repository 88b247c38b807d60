set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
grep -E "C75|resident" $R/build.txt | head
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
(cuobjdump -sass -fun regex:resident_kernel build-gpu/src/CMakeFiles/tessera_sm90a.dir/cuda/sm90a/linear_wgmma_resident.cu.o 2>&1 || true) > $R/sass_resident.txt; grep -c -E "LDL|STL" $R/sass_resident.txt; grep -c -E "WARPGROUP.DEPBAR|HGMMA" $R/sass_resident.txt
timeout 90 $T --gtest_filter="Linear*" > $R/linear_test_$C.txt 2>&1; LRC=$?; echo linear rc=$LRC; grep -E "FAILED|PASSED|Failure|SKIP" $R/linear_test_$C.txt | head -20
if [ $LRC -ne 0 ]; then grep -A3 "Failure" $R/linear_test_$C.txt | head -30; fi
timeout 100 python3 .carry/exp3/probe.py > $R/probe_$C.txt 2>&1; echo probe rc=$?; grep -v Warn $R/probe_$C.txt
export TESSERA_TEST_SMALL=1
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="LinearCuda.EveryVariantMatchesReference" > $R/${tool}_linear_$C.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_linear_$C.txt | tail -n 3
done
unset TESSERA_TEST_SMALL
timeout 90 build-gpu/tests/tessera_torch_tests --gtest_filter='*Cuda*:GCNConv*:SAGEConv*' > $R/torch_tests_$C.txt 2>&1; echo torch_tests rc=$?; grep -E "FAILED|PASSED|Failure" $R/torch_tests_$C.txt | head
if [ $LRC -eq 0 ]; then
timeout 150 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid --data-dir .carry/data --budget-s 110 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 25
fi
