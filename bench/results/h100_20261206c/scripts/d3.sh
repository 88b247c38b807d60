# session 2026-12-06 (eleventh) call 3: the landed cuda.multi_query (queries in shared memory for the
# 16-accumulator shapes, 3 blocks per SM) built on the device against its torch; the attention layers
# against PyG on all five graphs; tests, sanitizers, pytest. Results packed into $OUT/r.tgz after every step.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
bash .carry/exp7/d3_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
