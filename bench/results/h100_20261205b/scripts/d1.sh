# session 2026-12-05 (fifth) call 1: Transformer without 2-head groups at C = 128 (320e9b9); C++ bipartite attention layers (a8a9582) on CUDA; Transformer layer bench.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/d1_steps.sh > $R/steps.txt 2>&1
tail -c 5000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
