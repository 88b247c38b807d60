# Call A: SAGEConv's root term through linear_add (on CUDA fp32 now tessera's tf32x3 kernel with
# lin_l's output as its residual, where it was cuBLAS's fp32 SGEMM accumulating in place) tested on
# the GPU and timed alone and in the layer; whether the layers ran under torch.compile before
# tessera.nn._compile (a probe, TESSERA_COMPILE_EAGER=0), and test_compile.py with it.
# On an H200 first the Transformer's 12 rows against PyG, the measurement the issue asks for.
# Carry: .carry/debs, .carry/googletest, .carry/data/cora, .carry/data/pubmed, .carry/COMMIT.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_torch_tests"
elapsed
if grep -q H200 $R/gpu.txt; then
  layer_bench transformer attention_layer_transformer "$(seconds_left 170 230)"
  elapsed
fi
logged pytest_linear_sage 120 python3 -m pytest -q tests/python/test_linear.py tests/python/test_sage.py
logged torch_tests 60 build-gpu/tests/tessera_torch_tests --gtest_filter='SAGEConv*:AttentionLayers*'
logged root_term 60 python3 bench/results/gpu_20261207h/scripts/root_term_probe.py
elapsed
TESSERA_COMPILE_EAGER=0 logged compile_probe "$(seconds_left 90 120)" \
  python3 bench/results/gpu_20261207h/scripts/compile_probe.py
logged pytest_compile "$(seconds_left 40 120)" python3 -m pytest -q -rs tests/python/test_compile.py
elapsed
logged sage_bench "$(seconds_left 5 120)" python3 bench/sage_bench.py --graphs rmat,grid --widths 64,256 \
  --json "$R/sage_bench_$C.json"
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|PASSED|FAILED"
tar xzf $OUT/r.tgz --wildcards -O "r/root_term*.txt" "r/compile_probe*.txt" 2>/dev/null | grep -v "^  File\|^    " | cut -c1-250
tar xzf $OUT/r.tgz --wildcards -O "r/sage_bench*.txt" 2>/dev/null | grep -E "F=" | cut -c1-200
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
