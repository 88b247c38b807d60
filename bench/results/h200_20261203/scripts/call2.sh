# call 2 (2026-12-03): adaptive heavy threshold of the attention walks and the linear op's residual
# (TransformerConv skip in one kernel): CUDA tests, memcheck, the attention bench on all five graphs
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 540 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
