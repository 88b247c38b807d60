# session 2026-12-04c call 1: where the small graphs' forward time goes (host vs GPU, profiler), the large graphs' kernel times.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s1_steps.sh > $R/steps.txt 2>&1
tail -c 3000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
