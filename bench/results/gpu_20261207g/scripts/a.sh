# Prepared in the twenty-fourth session (gpu_20261207f/scripts/c.sh) and run in the twenty-fifth. The
# folded form without autograd on Cora at C >= K, forced off and on, alternated twice (tessera
# alone; TESSERA_TRANSFORMER_FOLD; Cora's 10556 entries are under FOLD_CUDA_INFERENCE_MIN_ENTRIES,
# so the rule does not fold there, from H100 runs made before the one op existed). PubMed, which
# folds under the rule, as the control. On an H200 the Transformer's 12 rows against PyG run first
# (moved ahead of the fold loop when the call ran: they are the measurement the issue asks for).
# The twenty-fifth session added, before the benchmarks, the layers' autocast and input-type tests
# on CUDA (pytest) and the C++ ones built against torch 2.x: the device was paused that session.
# Carry as call A.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_torch_tests"
elapsed
# The twenty-fifth session's layer changes (autocast, input types) against torch 2.x and on CUDA.
timeout 90 python3 -m pytest -q tests/python/test_layer_inputs.py > $R/pytest_layer_inputs_$C.txt 2>&1; echo pytest rc=$?
tail -n 3 $R/pytest_layer_inputs_$C.txt
timeout 60 build-gpu/tests/tessera_torch_tests --gtest_filter='LayerInputs.*' > $R/torch_tests_$C.txt 2>&1; echo gtest rc=$?
tail -n 3 $R/torch_tests_$C.txt
elapsed
if grep -q H200 $R/gpu.txt; then
  layer_bench transformer attention_layer_transformer "$(seconds_left 30 150)"
  elapsed
fi
for rep in 1 2; do for f in 0 1; do
  TESSERA_TRANSFORMER_FOLD=$f layer_bench transformer fold${f}_rep$rep "$(seconds_left 5 55)" --no-pyg --graphs cora,pubmed --hc 8x128,2x256
done; done
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|PASSED|FAILED"
tar xzf $OUT/r.tgz --wildcards -O "r/fold*.txt" 2>/dev/null | grep -E "fwd" | cut -c1-120
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
