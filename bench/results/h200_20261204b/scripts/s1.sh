# session 2026-12-04b call 1: the wgmma projection with TMA loads (no spills): linear tests, probe
# against cuBLAS and the other variants, ncu at 2^20 x 128 -> 512, sanitizers, attention benchmark.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s1_steps.sh > $R/steps.txt 2>&1
tail -c 9000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
