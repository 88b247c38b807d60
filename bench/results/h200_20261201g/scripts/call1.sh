set -x
mkdir -p $OUT/r
bash scripts/gpu_session.sh build > $OUT/r/build.txt 2>&1; tail -3 $OUT/r/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 120 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 > $OUT/r/ctest_cuda.txt 2>&1); tail -3 $OUT/r/ctest_cuda.txt
timeout 120 python3 -m pytest -q tests/python > $OUT/r/pytest.txt 2>&1; tail -3 $OUT/r/pytest.txt
K='regex:forward_kernel|backward_targets|backward_sources'
timeout 150 ncu --profile-from-start off -k "$K" --set full python3 .carry/diag/fb_once.py rmat:scale=20,degree=16,seed=1 TransformerConv 4 64 > $OUT/r/ncu_rmat_transformer_fb.txt 2>&1; tail -2 $OUT/r/ncu_rmat_transformer_fb.txt
timeout 80 ncu --profile-from-start off -k "$K" --set full python3 .carry/diag/fb_once.py rmat:scale=20,degree=16,seed=1 GATv2Conv 4 64 fwd > $OUT/r/ncu_rmat_gatv2_fwd.txt 2>&1; tail -2 $OUT/r/ncu_rmat_gatv2_fwd.txt
timeout 60 python3 .carry/diag/prof_fb.py rmat:scale=20,degree=16,seed=1 TransformerConv 4 64 > $OUT/r/prof_rmat_transformer.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
