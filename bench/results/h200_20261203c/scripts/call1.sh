# call 1 (2026-12-03c): verify e1b5bf1 + b1d7ac1 on the GPU (CUDA tests, pytest, gpu_session env stage),
# baseline of the small/medium attention rows and the wall-vs-GPU gap probe.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 560 bash .carry/exp/call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
