# session 2026-12-03e call 1: wgmma linear variants: build, CUDA ctest, sanitizers on the linear test,
# variant probe, full pytest (verifies ab5f9ad's changes too).
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 560 bash .carry/exp/e_call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
