# call 1 (2026-12-03d): verify 8c233f4 + 324a9db on the GPU (CUDA tests, pytest), profile the host
# path of a small-graph attention forward+backward, small/medium attention rows with adaptive reps.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 540 bash .carry/exp/call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
