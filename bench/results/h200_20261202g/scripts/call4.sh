# call 4 (2026-12-02 g, review): the shared tf32 mma header: CUDA tests of its three users.
R=$OUT/r; mkdir -p $R
timeout 400 bash .carry/exp/call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
