# call 4 (11c4d84): verification at the session's code commit (CUDA ctest, full pytest against
# PyG 2.8) and fp32 edge-feature layers (edge_dim 8) against PyG in the same run.
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 120 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 3 $R/ctest_cuda.txt
timeout 150 python3 -m pytest -q tests/python > $R/pytest.txt 2>&1; tail -n 2 $R/pytest.txt
timeout 260 python3 bench/attention_layer_bench.py --json $R/attention_edge8_f32_pyg.json --edge-dim 8 --graphs rmat,grid,clustered --hc 4x64 --budget-s 230 > $R/attention_edge8_f32_pyg.txt 2>&1
grep -E "H=|median|ratio" $R/attention_edge8_f32_pyg.txt | head -20
cd $OUT && tar czf r.tgz r && rm -rf r
