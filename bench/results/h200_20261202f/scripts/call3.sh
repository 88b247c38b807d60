# call 3 (2026-12-02 f): A/B of d317dff against 2c227b0 (tessera_torch of each, same call) on the
# small graphs (gcn_bench cora,pubmed, alternating), host path (host_overhead), then the full
# gcn_bench of d317dff and a racecheck of the SpMM conformance with a longer limit.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 570 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
