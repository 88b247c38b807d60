# call 3 (2026-12-03c): the tile heuristic with 64x64 and the no-grad forward path: CUDA ctest, full pytest,
# tile probe (heuristic against each tile), gap probe, the attention layer benchmark on all graphs.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 215 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
