# session 2026-12-07 (twenty-first) call A: the one op's inner ops below their Autograd kernels
# without autograd (transformer_inference_op.cpp), and the residual row prefetched to L2 again, now
# behind TESSERA_ATTENTION_PREFETCH_RESIDUAL (default on) so one build measures both.
# tessera_tests Attention* (the CUDA cases with a residual now take the prefetch) and
# tessera_torch_tests AttentionLayers*; memcheck on the fused sweep and the head groups; pytest
# test_linear.py + test_attention.py; bench/blocking_probe.py on PubMed (the one op alone with grad
# mode off and on: the guard's saving); the grid 4x64 forward's timeline with the prefetch off and
# on, and the layer alone there, prefetch off / on twice; the Transformer against PyG on the five
# graphs. Carry: .carry/debs .carry/googletest .carry/data/cora .carry/data/pubmed .carry/COMMIT;
# the working tree must be the commit.
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
TESSERA_TEST_SMALL=1 timeout 120 $CS --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests \
  --gtest_filter='AttentionCuda.HeadGroupsMatchReference:AttentionCuda.FusedMatchesReference*' > $R/memcheck_attention.txt 2>&1; echo memcheck rc=$?
tail -n 3 $R/memcheck_attention.txt
elapsed
timeout 150 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 5 $R/pytest_$C.txt
elapsed
timeout 60 python3 bench/blocking_probe.py --graph pubmed --data-dir $D > $R/blocking_probe_pubmed.txt 2>&1; echo probe rc=$?
for f in 0 1; do
  TESSERA_ATTENTION_PREFETCH_RESIDUAL=$f timeout 60 python3 bench/attention_profile.py --layer transformer --graph grid --hc 4x64 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_grid_4x64_prefetch$f.txt 2>&1; echo timeline prefetch$f rc=$?
done
for rep in 1 2; do for f in 0 1; do
  TESSERA_ATTENTION_PREFETCH_RESIDUAL=$f timeout 50 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs grid --hc 4x64 --data-dir $D --budget-s 35 --json $R/prefetch${f}_rep${rep}.json > $R/prefetch${f}_rep${rep}.txt 2>&1; echo prefetch$f rep$rep rc=$?
done; done
elapsed
L=$(( ${END:-560} - ($(date +%s) - T0) ))
if [ $L -gt 100 ]; then
  timeout $L python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 40 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
fi
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|FAILED|ERROR SUMMARY"
tar xzf $OUT/r.tgz -O r/blocking_probe_pubmed.txt 2>/dev/null | grep -E "TransformerConv|add" | cut -c1-150
tar xzf $OUT/r.tgz --wildcards -O "r/timeline_grid*.txt" 2>/dev/null | grep -E "^==|forward_kernel|resident|timeline \(us\)" | cut -c1-100,200-300
for f in prefetch0_rep1 prefetch1_rep1 prefetch0_rep2 prefetch1_rep2; do echo $f; tar xzf $OUT/r.tgz -O r/$f.txt 2>/dev/null | grep fwd | cut -c1-80; done
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
