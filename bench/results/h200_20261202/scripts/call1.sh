# Session 2026-12-02, call 1: build at the carried commit, CUDA tests + pytest (the last session's
# CPU-only commits and the new tensor-core sandwich), the dense-tile A/B (FFMA vs tf32x3 with 8 or
# 4 m16 tiles per warp, alternated twice), memcheck of the sandwich test, ncu of the new stage.
set -x
R=$OUT/r; mkdir -p $R
C=$(cut -c1-7 .carry/COMMIT)
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 150 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $R/ctest_cuda_$C.txt 2>&1); tail -4 $R/ctest_cuda_$C.txt
O=build-gpu/src/CMakeFiles/tessera_core.dir/cuda/kernels/marginalized_kernel.cu.o
cuobjdump -sass $O | awk '/Function : .*sandwich_tf32x3_kernelILi4/{p=1} p&&/Function : /&&!/sandwich_tf32x3_kernelILi4/{p=0} p' > $R/sass_tf32x3_4_$C.txt
echo "sass tiles=4:"; grep -E '/\*[0-9a-f]{4}\*/' $R/sass_tf32x3_4_$C.txt | awk '{for(i=2;i<=NF;i++) if ($i ~ /^[A-Z][A-Z0-9]+(\.|$)/) {split($i,a,"."); print a[1]; break}}' | sort | uniq -c | sort -rn | head -16
B=build-gpu/bench/graph_kernel_bench
for round in 1 2; do for v in 0 8 4; do
  TESSERA_MGK_TF32=$v timeout 60 $B --sets none --synthetic 0 --fit-check 0 --dense-band 16 --json $R/gk_dense_${C}_tf32_${v}_r$round.json > $R/gk_dense_${C}_tf32_${v}_r$round.txt 2>&1
  grep -o '"dense_band12_[a-z]*_[12]label_matvec_kernel_share_of_fp32_peak_executed":[0-9.]*' $R/gk_dense_${C}_tf32_${v}_r$round.json | sed "s/^/tf32=$v r$round /"
done; done
timeout 150 python3 -m pytest -q -x tests/python > $R/pytest_$C.txt 2>&1; tail -2 $R/pytest_$C.txt
TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='GraphKernelCuda.SandwichMatvecMatchesDirectPath' > $R/memcheck_sandwich_$C.txt 2>&1; echo memcheck rc=$?; tail -3 $R/memcheck_sandwich_$C.txt
timeout 120 ncu --clock-control none -k regex:sandwich_tf32x3 --launch-count 2 --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats $B --sets none --synthetic 0 --fit-check 0 --dense-band 1 > $R/ncu_tf32x3_$C.txt 2>&1; grep -E "Duration|Registers Per|Achieved Occ|DRAM Through|L1/TEX Cache Th|Compute \(SM\)|Issue Slots|Warp Cycles Per Issued" $R/ncu_tf32x3_$C.txt
cd $OUT && tar czf r.tgz r && rm -rf r
