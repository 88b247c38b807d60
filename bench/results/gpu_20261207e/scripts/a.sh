# session 2026-12-07 (twenty-second) call A, on an H200 (needs_h200: PyG's R-MAT 4x64, grid 8x128
# and clustered 2x256 rows need 97-115 GB, more than an H100 holds; the benchmark and its
# R-MAT reference figures are on the H200). No CUDA change since gpu_20261207d's calls; new: the
# Transformer's repeats of its last one-op call (transformer._RepeatCall). First the issue's
# benchmark, the Transformer and GATv2 layers against PyG on the five graphs (12 rows an H200
# fits); then the repeats off / on alternated twice (TESSERA_TRANSFORMER_REPEAT, tessera alone,
# Cora and PubMed), bench/blocking_probe.py on Cora; with what time is left, the CUDA tests
# (ctest -R Cuda) and the attention pytest. Carry: .carry/debs .carry/googletest .carry/data/cora .carry/data/pubmed
# .carry/COMMIT; the working tree must be the commit. END (default 570): the second the call ends by.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_tests tessera_torch_tests"
elapsed
L=$(( 400 - ($(date +%s) - T0) ))
timeout $L python3 bench/attention_layer_bench.py --layers transformer,gatv2 --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 40 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
for rep in 1 2; do for f in 0 1; do
  TESSERA_TRANSFORMER_REPEAT=$f timeout 40 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs cora,pubmed --data-dir $D --budget-s 25 --json $R/repeat${f}_rep${rep}.json > $R/repeat${f}_rep${rep}.txt 2>&1; echo repeat$f rep$rep rc=$?
done; done
timeout 60 python3 bench/blocking_probe.py --graph cora --data-dir $D > $R/blocking_probe_cora.txt 2>&1; echo probe rc=$?
elapsed
L=$(( ${END:-570} - ($(date +%s) - T0) ))
[ $L -gt 30 ] && { timeout $(( L * 2 / 3 )) ctest --test-dir build-gpu -R 'Cuda' -j 4 --timeout 120 > $R/ctest_cuda_$C.txt 2>&1; echo ctest rc=$?; tail -n 6 $R/ctest_cuda_$C.txt; }
elapsed
L=$(( ${END:-570} - ($(date +%s) - T0) ))
[ $L -gt 20 ] && { timeout $L python3 -m pytest -q tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 3 $R/pytest_$C.txt; }
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|tests passed|FAILED|passed|failed"
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
