# session 2026-12-04c call 3: the reverted forward with the LargeWalk test; PubMed heavy-threshold A/B.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s3_steps.sh > $R/steps.txt 2>&1
tail -c 3000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
