# session 2026-12-06 (tenth) call 2: cuda.multi_query (c5bfb69) and the inference fold rule (3888432)
# on a GPU. Most important steps first; results packed into $OUT/r.tgz after every step.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
bash .carry/exp6/d2_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
