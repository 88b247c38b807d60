# session 2026-12-03g call 1: RS wgmma linear (W pre-split): build, LinearCuda, variant probe, sanitizers, gap probe.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 540 bash .carry/exp/g_call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
