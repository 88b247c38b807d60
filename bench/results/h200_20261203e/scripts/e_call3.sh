# session 2026-12-03e call 3: the wgmma tile with its measured heuristic: tests, probe, pytest, benchmarks.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 585 bash .carry/exp/e_call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
