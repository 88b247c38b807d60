# session 2026-12-03e call 2: wgmma v2 (cp.async stages): linear tests, sanitizers, variant probe
# variant probe, full pytest (verifies ab5f9ad's changes too).
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 560 bash .carry/exp/e_call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
