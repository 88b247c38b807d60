# call 2: the C++ GATv2Conv's loop edge features through the selection SpMM; CUDA ctest (with the
# new AttentionLayersCuda test), full pytest, memcheck of the new test, the C++ layer benchmark,
# then the same benchmark built from a8cce2e's sources (A/B, same call).
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 150 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 3 $R/ctest_cuda.txt
(cd build-gpu && timeout 60 ctest -R 'AttentionLayers' --output-on-failure > $R/ctest_attention_layers.txt 2>&1); tail -n 3 $R/ctest_attention_layers.txt
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_torch_tests --gtest_filter='AttentionLayersCuda.*' > $R/memcheck_attention_layers.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_attention_layers.txt
timeout 60 build-gpu/bench/attention_layer_cpp_bench --json $R/attention_layer_cpp.json > $R/attention_layer_cpp.txt 2>&1; cat $R/attention_layer_cpp.txt | grep -v WARN
timeout 200 python3 -m pytest -q tests/python > $R/pytest.txt 2>&1; tail -n 2 $R/pytest.txt
echo a8cce2e > .carry/old/COMMIT_OLD
(cd .carry/old && TESSERA_CARRY=$PWD/.. BUILD=build-old BUILD_TARGETS=attention_layer_cpp_bench timeout 200 bash scripts/gpu_session.sh build > $R/build_old.txt 2>&1); tail -2 $R/build_old.txt
TESSERA_COMMIT=a8cce2e timeout 60 .carry/old/build-old/bench/attention_layer_cpp_bench --json $R/attention_layer_cpp_a8cce2e.json > $R/attention_layer_cpp_a8cce2e.txt 2>&1; grep -v WARN $R/attention_layer_cpp_a8cce2e.txt
timeout 60 build-gpu/bench/attention_layer_cpp_bench --json $R/attention_layer_cpp_again.json > $R/attention_layer_cpp_again.txt 2>&1; grep -v WARN $R/attention_layer_cpp_again.txt
cd $OUT && tar czf r.tgz r && rm -rf r
