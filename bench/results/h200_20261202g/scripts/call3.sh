# call 3 (2026-12-02 g): the linear tests with the K-dependent bound, at 34aaf13.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 330 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
