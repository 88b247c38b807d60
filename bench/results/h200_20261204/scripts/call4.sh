# session 2026-12-04 call 4: racecheck (call 3's combined run timed out at 75 s), split in two runs.
R=$OUT/r; mkdir -p $R
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 2 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
export TESSERA_TEST_SMALL=1
T=build-gpu/tests/tessera_tests
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter=LinearCuda.WeightGradMatchesReference > $R/racecheck_dw_$C.txt 2>&1; echo dw rc=$?; tail -n 2 $R/racecheck_dw_$C.txt
timeout 110 compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_filter="AttentionCuda.FusedMatchesReferenceAcrossDtypesWidthsAndKinds:AttentionCuda.DropoutSymmetricAndHeavyRowsMatchReference:AttentionCuda.UnalignedRowsTakeTheGenericPath" > $R/racecheck_attention_$C.txt 2>&1; echo attention rc=$?; tail -n 2 $R/racecheck_attention_$C.txt
cd $OUT && tar czf r.tgz r && rm -rf r
