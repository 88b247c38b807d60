# session 2026-12-07 (eighteenth) call B, right after call A on the same warm machine (its build kept):
# the Transformer layer against PyG on the five graphs with the forward as one op (the default).
# PREPARED (default 0): TESSERA_LINEAR_PREPARED for the run (call B ran with PREPARED=1). END (default 540): the second the bench
# must end by. Carry as call A.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
L=$(( ${END:-540} - ($(date +%s) - T0) ))
TESSERA_LINEAR_PREPARED=${PREPARED:-0} timeout $L python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 60 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" | grep -E "fwd|medians" | cut -c1-220
