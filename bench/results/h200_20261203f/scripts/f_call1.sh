# session 2026-12-03f call 1: verify 18a7ea4 (LinearCuda, CUDA ctest, pytest), gap probe, ncu of linear and attention kernels.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/f_call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
