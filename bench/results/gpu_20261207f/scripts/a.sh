# session 2026-12-07 (twenty-fourth) call A, on whichever card comes (kind nvidia-h200 without
# needs_h200). First what the twenty-second session's last commits need on a GPU (b623603, e49db04,
# b0d0597): pytest test_attention.py and bench/blocking_probe.py on Cora; then bench/host_overhead.py
# on the Transformer's Cora 4x64 training step (where its host time goes now). On an H200 also the
# issue's benchmark, the Transformer layer against PyG on the five graphs (the 12 rows an H200
# fits) before the probe, and GATv2's after it until END (default 560 s). Carry: .carry/debs
# .carry/googletest .carry/data/cora .carry/data/pubmed .carry/COMMIT; the tree must be the commit.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 150 python3 -m pytest -q tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 3 $R/pytest_$C.txt
if grep -q H200 $R/gpu.txt; then
  L=$(( ${END:-560} - 30 - ($(date +%s) - T0) )); [ $L -gt 150 ] && L=150
  timeout $L python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 30 )) --json $R/attention_layer_transformer_$C.json > $R/attention_layer_transformer_$C.txt 2>&1; echo transformer rc=$?
  elapsed
fi
timeout 40 python3 bench/blocking_probe.py --graph cora --data-dir $D > $R/blocking_probe_cora.txt 2>&1; echo probe rc=$?
elapsed
timeout 40 python3 bench/host_overhead.py --layer transformer --hc 4x64 --graph cora --data-dir $D --width 128 --profile forward+backward > $R/host_transformer_4x64_cora.txt 2>&1; echo host rc=$?
elapsed
if grep -q H200 $R/gpu.txt; then
  L=$(( ${END:-560} - ($(date +%s) - T0) ))
  [ $L -gt 60 ] && { timeout $L python3 bench/attention_layer_bench.py --layers gatv2 --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 30 )) --json $R/attention_layer_gatv2_$C.json > $R/attention_layer_gatv2_$C.txt 2>&1; echo gatv2 rc=$?; }
  elapsed
fi
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed"
tar xzf $OUT/r.tgz -O r/blocking_probe_cora.txt 2>/dev/null | grep -E "Transformer|stood|repeat|fold" | cut -c1-140
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
