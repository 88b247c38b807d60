# session 2026-12-05 (eighth) call 1: the seventh session's code on the GPU (linear_blocks, the
# Transformer fold), the fold measured on CUDA, its kernel split.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp4/c1_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
