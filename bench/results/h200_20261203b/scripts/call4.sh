# call 4 (2026-12-03b): final code: CUDA tests, full pytest, the attention bench on all five graphs,
# the memory probe in the bench's mode, gcn_bench as time allows
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 440 bash .carry/exp/call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
