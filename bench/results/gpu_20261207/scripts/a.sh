# session 2026-12-07 (eighteenth) call A: TransformerConv's forward without autograd as one op
# (tessera.transformer_inference), built on the device: pytest test_linear.py + test_attention.py (the
# one-op tests on CUDA, and the seventeenth session's corrected prepared-weights test, never run on a
# GPU); the host time per call (bench/host_path_probe.py: the Transformer with the one op and the
# prepared projections each off and on); the Transformer alone on Cora and PubMed with the one op off
# and on, twice (TESSERA_TRANSFORMER_ONE_OP=0/1/0/1); the Cora 4x64 forward's timeline both ways.
# Carry .carry/debs, .carry/googletest, .carry/data/cora, .carry/data/pubmed, .carry/COMMIT; the
# working tree must be the commit.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_tests"
elapsed
timeout 220 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 5 $R/pytest_$C.txt
elapsed
timeout 90 python3 bench/host_path_probe.py --graph cora --data-dir $D > $R/host_path_probe.txt 2>&1; echo probe rc=$?
cat $R/host_path_probe.txt
elapsed
for rep in 1 2; do for o in 0 1; do
  TESSERA_TRANSFORMER_ONE_OP=$o timeout 40 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs cora,pubmed --data-dir $D --budget-s 25 --json $R/oneop${o}_rep${rep}.json > $R/oneop${o}_rep${rep}.txt 2>&1; echo oneop$o rep$rep rc=$?
done; done
elapsed
for o in 0 1; do
  TESSERA_TRANSFORMER_ONE_OP=$o timeout 45 python3 bench/attention_profile.py --layer transformer --graph cora --hc 4x64 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_transformer_cora_4x64_oneop$o.txt 2>&1; echo timeline oneop$o rc=$?
done
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|PASSED|FAILED"
tar xzf $OUT/r.tgz -O r/host_path_probe.txt
for f in oneop; do tar xzf $OUT/r.tgz --wildcards -O "r/$f*.txt" | grep -E "fwd" | cut -c1-120; done
