# call 1 (2026-12-02 f): overlap probe (GEMM chunks vs SpMM chunks on two streams, grid 2^20) and
# the host-path baseline of the GCN layer on Cora, at 2c227b0 (no CUDA change).
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 500 bash .carry/exp/call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
