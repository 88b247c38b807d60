# session 2026-12-05c call 1: cuda.wgmma.resident (tests, sass, probe, sanitizers), the C++ GCN/SAGE
# projections' CUDA tests, the attention layer bench on Cora, PubMed and the grid.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp3/c1_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
