# session 2026-12-07 (twenty-first) call B, on an H200 (needs_h200: PyG's R-MAT 4x64, grid 8x128
# and clustered 2x256 rows need 97-115 GB, more than an H100 holds; the benchmark and its
# R-MAT reference figures are on the H200): at the commit after call A, the prefetch reverted.
# The PubMed 8x128 forward's timeline (its forward took 0.35 ms in call A, 0.32 in gpu_20261207c),
# then the Transformer and GATv2 layers against PyG on the five graphs. Carry as call A; the
# working tree must be the commit. END (default 560): the second the layer bench must end by.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 45 python3 bench/attention_profile.py --layer transformer --graph pubmed --hc 8x128 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_transformer_pubmed_8x128.txt 2>&1; echo timeline rc=$?
elapsed
L=$(( ${END:-560} - ($(date +%s) - T0) ))
timeout $L python3 bench/attention_layer_bench.py --layers transformer,gatv2 --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 50 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
tar xzf $OUT/r.tgz --wildcards -O "r/timeline_*.txt" 2>/dev/null | grep -E "^==|kernel|timeline \(us\)" | cut -c1-100,200-300
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
