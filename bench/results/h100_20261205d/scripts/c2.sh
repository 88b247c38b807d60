# session 2026-12-05 (eighth) call 2: the multi-query attention (kv_heads = 1) on CUDA: tests,
# sanitizers, the folded TransformerConv as one multi-query call measured against the unfolded form.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp4/c2_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
