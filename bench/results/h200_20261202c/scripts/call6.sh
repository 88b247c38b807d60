# call 6: edge features through the selection SpMM (and no permutation for target-sorted edges).
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -2 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 60 python3 -m pytest -q tests/python/test_attention.py > $R/pytest_attention.txt 2>&1; tail -n 1 $R/pytest_attention.txt
timeout 90 python3 bench/attention_layer_bench.py --json $R/attention_edge_f16.json --dtype f16 --no-pyg --edge-dim 8 --graphs rmat,grid --hc 4x64 --budget-s 70 > $R/attention_edge_f16.txt 2>&1
grep -E "H=" $R/attention_edge_f16.txt
timeout 70 python3 bench/attention_layer_bench.py --json $R/attention_edge_f32.json --no-pyg --edge-dim 8 --graphs rmat,grid --hc 4x64 --budget-s 50 > $R/attention_edge_f32.txt 2>&1
grep -E "H=" $R/attention_edge_f32.txt
timeout 40 python3 bench/attention_profile.py --layer gatv2 --dtype f32 --edge-dim 8 --forward-only --rows 6 > $R/profile_gatv2_f32_edge8_fwd.txt 2>&1
grep -E "^==|forward_kernel|gather|csr|spmm" $R/profile_gatv2_f32_edge8_fwd.txt | cut -c1-100,150-175
(cd build-gpu && timeout 60 ctest -R 'Attention|Spmm.*Cuda|Cuda.*Spmm' --output-on-failure > $R/ctest.txt 2>&1); tail -n 2 $R/ctest.txt
cd $OUT && tar czf r.tgz r && rm -rf r
