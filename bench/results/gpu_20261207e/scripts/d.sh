# session 2026-12-07 (twenty-second) call D, on an H200 with the 330 s left: the Transformer alone
# against PyG on the five graphs (the 12 rows an H200 fits), nothing else. Carry as call A.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 120 python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 100 --json $R/attention_layer_transformer_$C.json > $R/attention_layer_transformer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
