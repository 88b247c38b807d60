# session 2026-12-04 call 3: the attention walks' row bounds loaded once per grab (A/B against call 2's
# tessera rows), attention CUDA tests, sanitizers on the weight gradient and the attention tests, ncu of
# the grid GATv2 4x64 forward kernel.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/call3_steps.sh > $R/steps.txt 2>&1
tail -c 9000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
