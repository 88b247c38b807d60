# call 4 (2026-12-02 f): the one-launch rule limited to <= 2 vectors per lane: CUDA ctest, memcheck
# on the SpMM conformance, and the small-graph A/B against 2c227b0 again (same call), then the full
# gcn_bench of this commit.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
