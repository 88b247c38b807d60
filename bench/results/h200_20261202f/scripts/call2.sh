# call 2 (2026-12-02 f): verify the merged medium-rows + row-pass launch and the linears() device
# check: CUDA ctest, memcheck and racecheck on the SpMM conformance (small), full pytest.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
