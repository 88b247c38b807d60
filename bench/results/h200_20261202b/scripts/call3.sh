# Session 2026-12-02 (b), call 3: f16 attention with edge features (edge_dim 8): the candidate bound
# (2 blocks per SM for the 16-bit edge forward at 8 channels per lane, i.e. C = 256; B) against the
# committed 36cb5e7 (no bound for 16-bit edge kernels; A), attention_layer_bench --dtype f16
# --no-pyg (tessera alone), B A with an incremental rebuild; CUDA attention ctest on B.
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
bench() {  # bench TAG
  timeout 120 python3 bench/attention_layer_bench.py --json $R/attention_edge_f16_$1.json --dtype f16 --no-pyg --edge-dim 8 --graphs rmat,grid --hc 2x256,4x64 --budget-s 100 > $R/attention_edge_f16_$1.txt 2>&1
  grep -E "H=" $R/attention_edge_f16_$1.txt | sed "s/^/$1 /"
}
bench B
(cd build-gpu && timeout 60 ctest -R 'Attention' --output-on-failure > $R/ctest_attention_B.txt 2>&1); tail -n 3 $R/ctest_attention_B.txt
H=src/cuda/ops/attention_kernels.cuh
sed -i 's/^  if constexpr (sizeof(T) == 2) return CPT == 8 \&\& (!EDGE || P == Pass::forward) ? 2 : 1;/  if constexpr (sizeof(T) == 2 \&\& !EDGE) return CPT == 8 ? 2 : 1;/' $H
grep -n -A2 "constexpr int min_blocks" $H
(cd build-gpu && time cmake --build . --target tessera_torch -j 16) > $R/rebuild_A.txt 2>&1; tail -n 2 $R/rebuild_A.txt
bench A
cd $OUT && tar czf r.tgz r && rm -rf r
