# session 2026-12-03e call 4: small-graph rows again at the same commit, with the host-time control.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 290 bash .carry/exp/e_call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
