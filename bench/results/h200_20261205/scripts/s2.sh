# session 2026-12-05 call 2: the f32 8-channel forward bounded to 3 blocks per SM: tests, layer bench, small-graph split.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s2_steps.sh > $R/steps.txt 2>&1
tail -c 3000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
