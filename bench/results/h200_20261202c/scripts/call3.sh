# call 3 (11c4d84): GATv2 edge-feature alignment in one gather + 16-bit edge kernel bounds; tests,
# memcheck, f16 and f32 edge-feature layers (tessera alone: compare with call 2 at 6a45f60 + the fp32 fill).
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 90 ctest -R 'Attention' --output-on-failure > $R/ctest_attention.txt 2>&1); tail -n 3 $R/ctest_attention.txt
timeout 120 python3 -m pytest -q tests/python/test_attention.py > $R/pytest_attention.txt 2>&1; tail -n 2 $R/pytest_attention.txt
TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.EdgeFeatures*' > $R/memcheck_edge.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_edge.txt
timeout 150 python3 bench/attention_layer_bench.py --json $R/attention_edge_f16.json --dtype f16 --no-pyg --edge-dim 8 --graphs rmat,grid --hc 4x64,2x256 --budget-s 120 > $R/attention_edge_f16.txt 2>&1
grep -E "H=" $R/attention_edge_f16.txt
timeout 100 python3 bench/attention_layer_bench.py --json $R/attention_edge_f32.json --no-pyg --edge-dim 8 --graphs rmat,grid --hc 4x64 --budget-s 80 > $R/attention_edge_f32.txt 2>&1
grep -E "H=" $R/attention_edge_f32.txt
timeout 60 python3 bench/attention_profile.py --layer gatv2 --dtype f16 --edge-dim 8 --forward-only --rows 8 > $R/profile_gatv2_f16_edge8_fwd.txt 2>&1
grep -E "^==|forward_kernel|gather" $R/profile_gatv2_f16_edge8_fwd.txt | cut -c1-100,150-
cd $OUT && tar czf r.tgz r && rm -rf r
