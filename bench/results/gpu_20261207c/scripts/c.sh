# session 2026-12-07 (twentieth) call C, after call B: its one failure was the prepared-projection
# test's expected launch count (the unfolded Transformer's skip now in the stacked product), fixed.
# pytest test_linear.py + test_attention.py; the cost of the 12 parameter reads through
# nn.Module.__getattr__ here (call B missed the predicted 10-12 us cut of the layer's Python);
# the PubMed 2x256 and Cora 4x64 Transformer forwards' timelines (PubMed 2x256 took 0.20 ms in call
# B, 0.17 in gpu_20261207b); the Transformer against PyG on the five graphs again (the spread of
# the host-led rows between runs). Carry as call B; the working tree must be the commit.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
timeout 120 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 3 $R/pytest_$C.txt
python3 bench/results/gpu_20261207c/scripts/getattr_cost.py > $R/getattr_cost.txt 2>&1; cat $R/getattr_cost.txt
for gh in pubmed:2x256 cora:4x64; do
  timeout 45 python3 bench/attention_profile.py --layer transformer --graph ${gh%%:*} --hc ${gh##*:} --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_transformer_${gh%%:*}_${gh##*:}.txt 2>&1; echo timeline $gh rc=$?
done
elapsed
timeout 150 python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 110 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|reads"
tar xzf $OUT/r.tgz --wildcards -O "r/timeline_*.txt" 2>/dev/null | grep -E "^==|timeline \(us\)|Self CUDA time"
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
