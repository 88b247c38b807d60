set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error" $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
T=build-gpu/tests/tessera_tests
timeout 120 python3 bench/attention_layer_bench.py --graphs grid,rmat,pubmed,cora --no-pyg --data-dir .carry/data --budget-s 90 --json $R/attention_nopyg_$C.json > $R/attention_nopyg_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_nopyg_$C.txt | tail -n 30
timeout 120 ctest --test-dir build-gpu -R "AttentionCuda|AttentionLayersCuda|LinearCuda" -j 4 --timeout 110 > $R/ctest_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_$C.txt | head
export TESSERA_TEST_SMALL=1
F="LinearCuda.WeightGradMatchesReference:AttentionCuda.FusedMatchesReferenceAcrossDtypesWidthsAndKinds:AttentionCuda.DropoutSymmetricAndHeavyRowsMatchReference:AttentionCuda.UnalignedRowsTakeTheGenericPath"
for tool in memcheck racecheck; do
  timeout 75 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="$F" > $R/${tool}_$C.txt 2>&1; echo $tool rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $R/${tool}_$C.txt | tail -n 3
done
unset TESSERA_TEST_SMALL
timeout 90 ncu --clock-control none -k regex:forward_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats python3 .carry/exp/ncu_forward.py gatv2 > $R/ncu_grid_gatv2_fwd_$C.txt 2>&1; echo rc=$?; grep -E "Duration|Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles|L2 Hit|L1/TEX Hit" $R/ncu_grid_gatv2_fwd_$C.txt | head -30
