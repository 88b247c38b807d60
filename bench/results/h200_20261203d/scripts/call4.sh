# call 4 (2026-12-03d): attention input gradients laid out like their inputs and the projection
# node's one-matrix backward: full pytest, Cora/PubMed attention rows, gap probe.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 300 bash .carry/exp/call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
