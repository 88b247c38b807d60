# session 2026-12-03g call 3: the illegal address of call 2 (R-MAT Transformer 4x64 fwd+bwd): blocking repro, memcheck on a small R-MAT, pytest, R-MAT bench rows.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 560 bash .carry/exp/g_call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
