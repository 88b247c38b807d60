# call 1 (a8cce2e): first build of the previous session's last torch-layer commits against torch 2.11;
# CUDA ctest + full pytest; cuBLAS FP32-emulation probe; GCN bench baseline; Cora host overhead.
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
nvcc -O2 -arch=sm_90 -std=c++17 .carry/exp/emu_probe.cu -lcublas -o /tmp/emu_probe 2>&1 | tail -3
timeout 150 /tmp/emu_probe > $R/emu_probe.txt 2>&1; cat $R/emu_probe.txt
(cd build-gpu && timeout 150 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 3 $R/ctest_cuda.txt
timeout 200 python3 -m pytest -q tests/python > $R/pytest.txt 2>&1; tail -n 2 $R/pytest.txt
timeout 120 python3 bench/gcn_bench.py --json $R/gcn_bench.json > $R/gcn_bench.txt 2>&1; grep -E "width|median" $R/gcn_bench.txt | cut -c1-200
timeout 60 python3 bench/host_overhead.py > $R/host_overhead.txt 2>&1; head -9 $R/host_overhead.txt
cd $OUT && tar czf r.tgz r && rm -rf r
