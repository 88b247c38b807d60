# Call D (warm, call A's H100): both attention layers against PyG on the five graphs at this
# session's commit: the input checks run on every call, so the host-bound Cora and PubMed rows
# would show their cost.
source scripts/device_call.sh
(
set -x
device_build "tessera_torch"
elapsed
layer_bench gatv2,transformer attention_layer "$(seconds_left 20 260)"
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" | grep -E "fwd|medians" | cut -c1-200
