# session 2026-12-04b call 3: the CUDA test suite and the full pytest on the H200 at the session's last code commit.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s3_steps.sh > $R/steps.txt 2>&1
tail -c 6000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
