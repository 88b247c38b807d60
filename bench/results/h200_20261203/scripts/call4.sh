# call 4 (2026-12-03): the linear kernel's residual as a template switch: Linear GPU tests, the
# linear and attention pytest, gcn_bench against PyG (#3), the Transformer on the grid, linear speed.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 200 bash .carry/exp/call4_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
