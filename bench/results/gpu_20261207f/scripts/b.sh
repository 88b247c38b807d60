# session 2026-12-07 (twenty-fourth) call B, on call A's H100 while warm (284 s of device time
# left, no H200 came): the Transformer layer against PyG on the five graphs (the 9 rows an H100
# fits), a third H100 sample at the current code (gpu_20261207e: 8.57x and 8.45x). Carry as call A.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 130 python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 100 --json $R/attention_layer_transformer_$C.json > $R/attention_layer_transformer_$C.txt 2>&1; echo transformer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
