# call 3 (2026-12-03b): column sums through cuBLAS gemv (bias gradients); tests; the memory probe of
# GATv2's fused bias on the small graphs
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 400 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
