# Session 2026-12-02 (b), call 1: two A/B experiments.
# (1) CSR row kernel gather batching: spmm_ilp_ab.cu, the committed kernel against predicated last
#     batches of 4 / 6 / 8 (variant headers carried in .carry/exp), row pass alone.
# (2) f16/bf16 attention forward occupancy: the tree's candidate (min_blocks 2 for the 16-bit
#     forward at 8 channels per lane, B) against the committed bound (1, A), attention_wsb_bench's
#     fused rows, B A B with incremental rebuilds of the library.
set -x
R=$OUT/r; mkdir -p $R
C=$(cut -c1-7 .carry/COMMIT)
(cd .carry/exp && nvcc -O3 -std=c++20 -arch=sm_90 -I. -Xptxas -v spmm_ilp_ab.cu -o spmm_ilp_ab > $R/spmm_ilp_ab_ptxas.txt 2>&1) &
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
wait
.carry/exp/spmm_ilp_ab > $R/spmm_ilp_ab.txt 2>&1; cat $R/spmm_ilp_ab.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
H=src/cuda/ops/attention_kernels.cuh
bench() {  # bench TAG
  timeout 150 python3 bench/attention_wsb_bench.py --json $R/attention_wsb_$1.json --graphs rmat,grid --hc 4x64,8x128 --dtypes f16,bf16 --budget-s 120 > $R/attention_wsb_$1.txt 2>&1
  grep -E "op: fused" $R/attention_wsb_$1.txt | sed "s/^/$1 /" | cut -c1-200
}
rebuild() { (cd build-gpu && time cmake --build . --target tessera_torch -j 16) > $R/rebuild_$1.txt 2>&1; tail -2 $R/rebuild_$1.txt; }
cp $H /tmp/h_b
bench B1
# A: the committed bound (1 block for every 16-bit kernel)
sed -i '/if constexpr (sizeof(T) == 2 \&\& !EDGE \&\& P == Pass::forward) return CPT == 8 ? 2 : 1;/d; s/^  else if constexpr (!std::is_same_v<T, float>) return 1;/  if constexpr (!std::is_same_v<T, float>) return 1;/' $H
grep -n -A3 "constexpr int min_blocks" $H
rebuild A; bench A1
cp /tmp/h_b $H; rebuild B; bench B2
cd $OUT && tar czf r.tgz r && rm -rf r
