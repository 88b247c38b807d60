# session 2026-12-07 (twentieth) call B (call A was refused a machine and never ran; its checks are
# here): at the commit that adds the attention's residual and stacks the one op's unfolded skip.
# tessera_tests Attention* and tessera_torch_tests AttentionLayers* (the C++ layers, now with the
# skip in the attention's write without autograd) (the CUDA conformance cases with the residual: fused, head groups,
# multi-query, heavy rows, wsb's refusal) and memcheck on the head groups; pytest test_linear.py +
# test_attention.py; bench/blocking_probe.py on PubMed (the layer's Python share of the host lead);
# the skip stacked off and on (TESSERA_TRANSFORMER_SKIP_STACKED=0/1/0/1, tessera alone, 4x64 on Cora,
# PubMed and the grid); the Transformer and GATv2 layers against PyG on the five graphs. END (default
# 560): the second the layer bench must end by. Carry: .carry/debs .carry/googletest
# .carry/data/cora .carry/data/pubmed .carry/COMMIT; the working tree must be the commit.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_tests tessera_torch_tests"
elapsed
timeout 150 build-gpu/tests/tessera_tests --gtest_filter='Attention*' > $R/gtest_attention_$C.txt 2>&1; echo gtest rc=$?
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]|Failure" $R/gtest_attention_$C.txt | head -20
timeout 100 build-gpu/tests/tessera_torch_tests --gtest_filter='AttentionLayers*' > $R/gtest_layers_$C.txt 2>&1; echo gtest layers rc=$?
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]|Failure" $R/gtest_layers_$C.txt | head -20
CS=$(command -v compute-sanitizer || find /usr/local -name compute-sanitizer -type f | head -1)
TESSERA_TEST_SMALL=1 timeout 90 $CS --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests \
  --gtest_filter='AttentionCuda.HeadGroupsMatchReference' > $R/memcheck_head_groups.txt 2>&1; echo memcheck rc=$?
tail -n 3 $R/memcheck_head_groups.txt
elapsed
timeout 150 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 5 $R/pytest_$C.txt
elapsed
timeout 60 python3 bench/blocking_probe.py --graph pubmed --data-dir $D > $R/blocking_probe_pubmed.txt 2>&1; echo probe rc=$?
for rep in 1 2; do for f in 0 1; do
  TESSERA_TRANSFORMER_SKIP_STACKED=$f timeout 50 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs cora,pubmed,grid --hc 4x64 --data-dir $D --budget-s 35 --json $R/stacked${f}_rep${rep}.json > $R/stacked${f}_rep${rep}.txt 2>&1; echo stacked$f rep$rep rc=$?
done; done
elapsed
L=$(( ${END:-560} - ($(date +%s) - T0) ))
if [ $L -gt 120 ]; then
  timeout $L python3 bench/attention_layer_bench.py --layers transformer,gatv2 --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 60 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
fi
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|FAILED|ERROR SUMMARY"
tar xzf $OUT/r.tgz -O r/blocking_probe_pubmed.txt 2>/dev/null | grep -E "folded|Transformer|Python|add" | cut -c1-150
for f in stacked0_rep1 stacked1_rep1 stacked0_rep2 stacked1_rep2; do echo $f; tar xzf $OUT/r.tgz -O r/$f.txt 2>/dev/null | grep fwd | cut -c1-80; done
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
