# session 2026-12-07 (twentieth) call A, at b3b945e (the nineteenth session's end): the CUDA tests of
# the changes no GPU has run yet (the Linears' parameters read from their tables, _linear._parameters_of,
# in the Transformer's one op, PreparedWeights' memo key and _fast_path; the fold-rule spy as a
# function): pytest test_linear.py + test_attention.py; bench/blocking_probe.py on PubMed (the layer's
# Python share of the host lead); the Transformer and GATv2 layers against PyG on the five graphs.
# Carry: .carry/debs .carry/googletest .carry/data/cora .carry/data/pubmed .carry/COMMIT.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 120 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 5 $R/pytest_$C.txt
elapsed
timeout 60 python3 bench/blocking_probe.py --graph pubmed --data-dir $D > $R/blocking_probe_pubmed.txt 2>&1; echo probe rc=$?
elapsed
L=$(( 560 - ($(date +%s) - T0) ))
timeout $L python3 bench/attention_layer_bench.py --layers transformer,gatv2 --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 70 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed"
tar xzf $OUT/r.tgz -O r/blocking_probe_pubmed.txt 2>/dev/null | grep -E "folded|Transformer|GATv2|Python|Error|error" | cut -c1-160
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
