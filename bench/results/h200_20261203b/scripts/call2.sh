# call 2 (2026-12-03b): GATv2's bias in the attention kernels' write (out_bias): CUDA tests, memcheck,
# full pytest, GATv2 rows of the attention bench; column-sum probe; ncu of the small-graph SpMM
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
