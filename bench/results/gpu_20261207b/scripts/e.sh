# session 2026-12-07 (nineteenth) call E: call D found the folded TransformerConv 2x256 forward on
# PubMed waiting for the GPU (75 us with the GPU idle, 1083 us with a 2 ms sleep queued), and none of
# the ops it calls waiting when called alone. bench/blocking_probe.py now also takes that forward
# apart (the layer with the one op off; its Python with the op stood in; the op alone; the op's
# three pieces alone), on PubMed; then again with CUDA_MODULE_LOADING=EAGER (no kernel module
# loaded at its first launch). Carry as call C.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 90 python3 bench/blocking_probe.py --graph pubmed --data-dir $D > $R/blocking_probe_pubmed.txt 2>&1; echo probe rc=$?
CUDA_MODULE_LOADING=EAGER timeout 120 python3 bench/blocking_probe.py --graph pubmed --data-dir $D > $R/blocking_probe_pubmed_eager.txt 2>&1; echo probe eager rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
tar xzf $OUT/r.tgz -O r/blocking_probe_pubmed.txt 2>/dev/null
tar xzf $OUT/r.tgz -O r/blocking_probe_pubmed_eager.txt 2>/dev/null | grep -E "folded|Transformer|GATv2|Error|error"
