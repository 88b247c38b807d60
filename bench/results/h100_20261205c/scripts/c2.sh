# session 2026-12-05c call 2: the resident projection's tests (W^T shape fixed), sanitizers, ncu,
# the attention layer bench on all five graphs.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp3/c2_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
