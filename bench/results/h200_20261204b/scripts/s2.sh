# session 2026-12-04b call 2: the wgmma epilogue (bias from shared memory, R ahead of the stores): probe, ncu, attention and GCN benchmarks.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s2_steps.sh > $R/steps.txt 2>&1
tail -c 9000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
