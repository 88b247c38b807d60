# call 2 (2026-12-03d): tessera.linears (C++ op and node), the W-as-stored (w_transposed) kernel,
# kept ones for column sums: CUDA ctest, memcheck + racecheck of the linear variants, full pytest,
# host profile of small-graph fwd+bwd (A/B against call 1), gap probe, Cora/PubMed attention rows.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
