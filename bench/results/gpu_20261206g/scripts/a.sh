# session 2026-12-06 (sixteenth) call A, at the fifteenth session's end (3904a92): the CUDA cases
# that never ran on a GPU (pytest test_attention.py + test_linear.py with the Cora-size gradient,
# layout and linear cases; tessera_tests AttentionCuda.* with the single-head cases); the grid 4x64
# and PubMed 8x128 Transformer forwards' timelines (host path, call behind a GPU sleep, back to
# back, GPU busy); the full attention layer bench against PyG. Results under $OUT/r, one tarball.
export PYTHONUNBUFFERED=1
R=$OUT/r; rm -rf $R; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
timeout 120 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.*' > $R/gtest_attention_cuda_$C.txt 2>&1; echo gtest rc=$?
tail -n 3 $R/gtest_attention_cuda_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
timeout 200 python3 -m pytest -q tests/python/test_attention.py tests/python/test_linear.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 3 $R/pytest_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
for row in "grid 4x64" "pubmed 8x128"; do set -- $row
  timeout 45 python3 bench/attention_profile.py --graph $1 --hc $2 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_tf_$1_$2.txt 2>&1; echo timeline $1 $2 rc=$?
done
echo elapsed $(( $(date +%s) - T0 ))
L=$(( 540 - ($(date +%s) - T0) ))
timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 160 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|PASSED|FAILED"
tar xzf $OUT/r.tgz -O r/gpu.txt
for f in timeline attention_layer; do tar xzf $OUT/r.tgz --wildcards -O "r/$f*.txt" | grep -v "^wrote" | cut -c1-220; done
