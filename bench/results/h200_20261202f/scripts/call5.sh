# call 5 (2026-12-02 f, review): the register-based one-launch rule: SpMM CUDA conformance and
# torch CUDA tests, then Cora/PubMed forward once.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 200 bash .carry/exp/call5_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
