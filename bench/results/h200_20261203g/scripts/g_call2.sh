# session 2026-12-03g call 2: wgmma weight gradient + heuristic: build, Linear tests, probe, CUDA ctest, pytest, attention bench, sanitizers.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 560 bash .carry/exp/g_call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
