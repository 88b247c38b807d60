# session 2026-12-05 (eighth) call 3: the attention layer bench against PyG 2.8 on all five graphs
# with the folded TransformerConv's CUDA rule.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp4/c3_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
