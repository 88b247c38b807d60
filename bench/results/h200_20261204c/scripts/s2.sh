# session 2026-12-04c call 2: the forward index windows, small grabs, heavy shares 2: tests, layer bench, memcheck.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s2_steps.sh > $R/steps.txt 2>&1
tail -c 3000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
