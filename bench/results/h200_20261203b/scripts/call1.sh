# call 1 (2026-12-03b): verify df9c204 (compile-time residual switch) and the linear tile heuristic by
# rows; host-path probe of the small graphs; GATv2 PubMed 8x128 kernel profile; gcn_bench with the
# SpMM kernel timed from CUDA graphs (warm and evicted L2)
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 560 bash .carry/exp/call1_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
