# session 2026-12-03g call 4: find the illegal address (R-MAT Transformer 4x64 after GATv2 and PyG): memcheck without torch's caching (every tensor its own allocation), blocking bench rows, test_linear.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 470 bash .carry/exp/g_call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
