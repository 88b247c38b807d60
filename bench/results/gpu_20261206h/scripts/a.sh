# session 2026-12-06 (seventeenth) call A: the sixteenth session's calls B and C in one
# (gpu_20261206g/scripts/b.sh, c.sh, never run), built on the device (tessera_torch and tessera_tests
# together took 156 s in gpu_20261206g call A, so no prebuilt binaries are carried): the kept-split
# checks (tessera_tests Linear*) and memcheck on the heads + second input case; pytest test_linear.py +
# test_attention.py (the prepared layers' launches and outputs, the block-gradient fix); the prepared
# path alternated with it off (TESSERA_LINEAR_PREPARED=0/1/0/1, tessera alone, Cora and PubMed); the
# host time per op and per layer call (bench/host_path_probe.py); the Cora 4x64 forwards' timelines both ways (Transformer and GATv2); the full layer bench against PyG
# with the prepared path on. Carry .carry/debs, .carry/googletest, .carry/data/cora,
# .carry/data/pubmed, .carry/COMMIT; the working tree must be the commit. END (default 520): the second the layer bench must end by (less where the device budget left is short).
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_tests"
elapsed
timeout 100 build-gpu/tests/tessera_tests --gtest_filter='Linear*' > $R/gtest_linear_$C.txt 2>&1; echo gtest rc=$?
grep -E "^\[ +(FAILED|PASSED|SKIPPED) +\]|Failure" $R/gtest_linear_$C.txt | head -20
CS=$(command -v compute-sanitizer || find /usr/local -name compute-sanitizer -type f | head -1)
TESSERA_TEST_SMALL=1 timeout 90 $CS --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests \
  --gtest_filter='LinearCuda.HeadsAndSecondInputMatchReference' > $R/memcheck_heads.txt 2>&1; echo memcheck rc=$?
tail -n 4 $R/memcheck_heads.txt
elapsed
timeout 200 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 5 $R/pytest_$C.txt
elapsed
timeout 60 python3 bench/host_path_probe.py --graph cora --data-dir $D > $R/host_path_probe.txt 2>&1; echo probe rc=$?
cat $R/host_path_probe.txt
for rep in 1 2; do for p in 0 1; do
  TESSERA_LINEAR_PREPARED=$p timeout 40 python3 bench/attention_layer_bench.py --no-pyg --graphs cora,pubmed --data-dir $D --budget-s 20 --json $R/prep${p}_rep${rep}.json > $R/prep${p}_rep${rep}.txt 2>&1; echo prep$p rep$rep rc=$?
done; done
elapsed
for layer in transformer gatv2; do for p in 0 1; do
  TESSERA_LINEAR_PREPARED=$p timeout 45 python3 bench/attention_profile.py --layer $layer --graph cora --hc 4x64 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_${layer}_cora_4x64_prep$p.txt 2>&1; echo timeline $layer prep$p rc=$?
done; done
elapsed
L=$(( ${END:-520} - ($(date +%s) - T0) ))
TESSERA_LINEAR_PREPARED=1 timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 40 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|PASSED|FAILED"
for f in prep timeline attention_layer; do tar xzf $OUT/r.tgz --wildcards -O "r/$f*.txt" | grep -E "fwd|timeline|medians" | cut -c1-200; done
