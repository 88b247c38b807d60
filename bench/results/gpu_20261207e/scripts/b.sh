# session 2026-12-07 (twenty-second) call B, on an H100 while the H200 is refused: the Transformer's
# repeats of its last one-op call (transformer._RepeatCall) on the GPU. pytest test_attention.py
# (the one-op CUDA tests count op calls now, repeats included); the repeats off / on alternated
# twice (TESSERA_TRANSFORMER_REPEAT, tessera alone, Cora and PubMed); bench/blocking_probe.py on
# Cora (the layer's Python with the op stood in, repeats on and off). Carry as call A; the working
# tree must be the commit.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 150 python3 -m pytest -q tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 3 $R/pytest_$C.txt
elapsed
for rep in 1 2; do for f in 0 1; do
  TESSERA_TRANSFORMER_REPEAT=$f timeout 40 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs cora,pubmed --data-dir $D --budget-s 25 --json $R/repeat${f}_rep${rep}.json > $R/repeat${f}_rep${rep}.txt 2>&1; echo repeat$f rep$rep rc=$?
done; done
elapsed
timeout 60 python3 bench/blocking_probe.py --graph cora --data-dir $D > $R/blocking_probe_cora.txt 2>&1; echo probe rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed"
tar xzf $OUT/r.tgz --wildcards -O "r/repeat*.txt" 2>/dev/null | grep -E "fwd" | cut -c1-160
tar xzf $OUT/r.tgz -O r/blocking_probe_cora.txt 2>/dev/null | grep -E "Transformer|stood|repeat" | cut -c1-140
