# session 2026-12-04 call 2: weight gradients before dx (GCN peak memory), pytest, GCN and attention benchmarks.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/call2_steps.sh > $R/steps.txt 2>&1
tail -c 8000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
