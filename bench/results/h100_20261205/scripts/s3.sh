# session 2026-12-05 third: the one call of a scarce device: gpu-next tests + layer bench, pytest, SpMM floors.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s3_steps.sh > $R/steps.txt 2>&1
tail -c 5000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
