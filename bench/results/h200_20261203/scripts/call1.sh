# call 1 (2026-12-03): attention layers on Cora and PubMed against PyG (the GCN slice's graphs the
# attention benchmark had left out), the host path of both layers there, and the forward kernel split.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 500 bash .carry/exp/call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
