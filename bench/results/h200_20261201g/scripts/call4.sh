set -x
mkdir -p $OUT/r
C=$(cat .carry/COMMIT | cut -c1-7)
bash scripts/gpu_session.sh build > $OUT/r/build.txt 2>&1; tail -3 $OUT/r/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) PYTHONPATH=$PWD/python TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so
(cd build-gpu && timeout 90 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $OUT/r/ctest_cuda_$C.txt 2>&1); tail -3 $OUT/r/ctest_cuda_$C.txt
timeout 90 python3 bench/attention_layer_bench.py --edge-dim 8 --hc 4x64 --json $OUT/r/attention_layer_edge8_$C.json > $OUT/r/attention_layer_edge8_$C.txt 2>&1; grep -v wrote $OUT/r/attention_layer_edge8_$C.txt | tail -9
timeout 80 python3 -m pytest -q tests/python > $OUT/r/pytest_$C.txt 2>&1; tail -2 $OUT/r/pytest_$C.txt
cd $OUT && tar czf r.tgz r && rm -rf r
