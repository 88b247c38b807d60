# session 2026-12-04b call 4: the CPU attention walks SSE2 / AVX2 copies built and tested on the GPU machine, CUDA tests and pytest again.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/s4_steps.sh > $R/steps.txt 2>&1
tail -c 6000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
