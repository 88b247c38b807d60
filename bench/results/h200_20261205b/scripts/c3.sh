# session 2026-12-05 (fourth) call 3: head groups per kind (GATv2 only by default): tests, op-level A/B on more graphs.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/c3_steps.sh > $R/steps.txt 2>&1
tail -c 3000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
