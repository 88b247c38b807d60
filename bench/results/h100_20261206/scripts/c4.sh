# session 2026-12-06 (ninth) call 4 (calls 1-3 never started): the compile-time multi-query kernels
# (3b98d9b..) and tessera.linear_heads (67b2d62) on a GPU. Most important steps first; the results
# are packed into $OUT/r.tgz after every step, so a call cut short still returns what it did.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
bash .carry/exp5/c4_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
