# session 2026-12-03f call 4 (review commit): build, the attention CUDA tests, the attention pytest.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 200 bash .carry/exp/f_call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
