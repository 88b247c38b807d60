# Session 2026-12-02 (b), call 2: the tree with the 16-bit attention bounds on every pass (forward,
# targets, sources: 2 blocks per SM at 8 channels per lane, B') — build, CUDA ctest, pytest, memcheck
# of the fused attention tests — against the forward-only bound of call 1 (B, rebuilt last), and the
# CSR row kernel's occupancy experiment (spmm_occ_ab.cu, launch bounds only).
set -x
R=$OUT/r; mkdir -p $R
(cd .carry/exp && nvcc -O3 -std=c++20 -arch=sm_90 -I. -Xptxas -v spmm_occ_ab.cu -o spmm_occ_ab > $R/spmm_occ_ab_ptxas.txt 2>&1) &
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
wait
.carry/exp/spmm_occ_ab > $R/spmm_occ_ab.txt 2>&1; cat $R/spmm_occ_ab.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 120 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 3 $R/ctest_cuda.txt
H=src/cuda/ops/attention_kernels.cuh
bench() {  # bench TAG
  timeout 150 python3 bench/attention_wsb_bench.py --json $R/attention_wsb_$1.json --graphs rmat,grid --hc 4x64,8x128 --dtypes f16,bf16 --budget-s 120 > $R/attention_wsb_$1.txt 2>&1
  grep -E "op: fused" $R/attention_wsb_$1.txt | sed "s/^/$1 /" | sed 's/wsb .*| layer/| layer/' | cut -c1-220
}
bench Bp
timeout 120 python3 -m pytest -q tests/python > $R/pytest.txt 2>&1; tail -n 1 $R/pytest.txt
TESSERA_TEST_SMALL=1 timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.FusedMatches*:AttentionCuda.DropoutSym*' > $R/memcheck_attention.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_attention.txt
# B: the bound on the 16-bit forward only (call 1's candidate)
sed -i 's/^  if constexpr (sizeof(T) == 2 \&\& !EDGE) return CPT == 8 ? 2 : 1;/  if constexpr (sizeof(T) == 2 \&\& !EDGE \&\& P == Pass::forward) return CPT == 8 ? 2 : 1;/' $H
grep -n -A2 "constexpr int min_blocks" $H
(cd build-gpu && time cmake --build . --target tessera_torch -j 16) > $R/rebuild_B.txt 2>&1; tail -n 2 $R/rebuild_B.txt
bench B
cd $OUT && tar czf r.tgz r && rm -rf r
