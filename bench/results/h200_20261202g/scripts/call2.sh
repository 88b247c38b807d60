# call 2 (2026-12-02 g): the tf32x3 linear family in the layers: build, GPU tests, memcheck and
# racecheck on the new kernel, full pytest, gcn_bench and the attention layer bench against PyG.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/call2_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
