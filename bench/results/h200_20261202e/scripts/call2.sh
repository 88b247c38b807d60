# call 2 (2026-12-02 e): row_runs vs warp_row (spmm_bench, same binary; GCN layer with each forced),
# memcheck of the SpMM conformance (new variant included), pytest with row_runs forced.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 555 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
