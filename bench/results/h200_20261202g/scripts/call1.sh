# call 1 (2026-12-02 g): tf32x3 projection kernel probe: correctness on odd shapes (+ memcheck,
# racecheck) and timing against cublasSgemm on the layers' shapes.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 400 bash .carry/exp/call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
