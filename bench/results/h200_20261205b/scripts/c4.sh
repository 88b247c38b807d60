# session 2026-12-05 (fourth) call 4: prebuilt (here, nvcc 13, sm_90) tessera_tests + attention_bench of 5cc3694's head-group default (GATv2 only);
# the attention CUDA tests on that default and with TESSERA_ATTENTION_HEAD_GROUPS=1, and the Transformer's A/B on three more graphs.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry2/c4_steps.sh > $R/steps.txt 2>&1
tail -c 3500 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
