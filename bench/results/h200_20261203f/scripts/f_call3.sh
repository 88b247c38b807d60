# session 2026-12-03f call 3: the final commit (compile-time GAT kernels; BGRADB reverted):
# build, CUDA ctest, full pytest, attention benchmark on all graphs, racecheck on the fused attention tests.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 530 bash .carry/exp/f_call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
