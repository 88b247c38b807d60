# session 2026-12-03f call 2: compile-time GAT kernels + fused bias gradient (cuBLASLt BGRADB):
# build, CUDA ctest, full pytest, gap probe, attention benchmark on all graphs, sanitizers on the attention tests.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 585 bash .carry/exp/f_call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
