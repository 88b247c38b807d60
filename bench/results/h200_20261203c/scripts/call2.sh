# call 2 (2026-12-03c): the projections of one input as one autograd node on CUDA, a 64x64 linear tile,
# memoized transposed SpMM values: CUDA ctest, memcheck of the linear variants, full pytest, tile probe,
# gap probe (A/B against call 1), the attention layer and GCN benchmarks on all graphs.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 590 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
