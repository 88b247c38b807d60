# call 3 (2026-12-03d): the end state (column sums on cuBLAS directly, unmaterialized attention
# gradients on top of call 2): full pytest, attention and GCN benchmarks on all graphs, host profile.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 585 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
