# Call 3: the end state of the tf32x3 stages. Full build, CUDA ctest (but the 120 s DenseTiles test)
# and pytest on torch 2.11, memcheck of the sandwich test, dense-tile A/B against the FFMA stages
# (two rounds), ncu of both tf32x3 stages, then the full graph-kernel benchmark.
set -x
R=$OUT/r; mkdir -p $R
C=$(cut -c1-7 .carry/COMMIT)
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 150 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $R/ctest_cuda_$C.txt 2>&1); tail -3 $R/ctest_cuda_$C.txt
O=build-gpu/src/CMakeFiles/tessera_core.dir/cuda/kernels/marginalized_kernel.cu.o
cuobjdump -sass $O | awk '$0 ~ "Function : .*sandwich_tf32x3_kernelILb0" {p=1; print; next} p && /Function : / {p=0} p' > $R/sass_tf32x3_stage1_$C.txt
B=build-gpu/bench/graph_kernel_bench
for round in 1 2; do for v in 0 1; do
  TESSERA_MGK_TF32=$v timeout 60 $B --sets none --synthetic 0 --fit-check 0 --dense-band 16 --json $R/gk_dense_${C}_tf32_${v}_r$round.json > $R/gk_dense_${C}_tf32_${v}_r$round.txt 2>&1
  python3 -c "import json;s=json.load(open('$R/gk_dense_${C}_tf32_${v}_r$round.json'))['summary'];print('tf32=$v r$round', ' '.join('%s=%.3f'%(k.replace('dense_band12_','').replace('_matvec_kernel_share_of_fp32_peak_executed',''),v) for k,v in s.items() if 'matvec_kernel' in k))"
done; done
timeout 100 ncu --clock-control none -k regex:sandwich_tf32x3 --launch-count 2 --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats $B --sets none --synthetic 0 --fit-check 0 --dense-band 1 > $R/ncu_tf32x3_$C.txt 2>&1; grep -E "Duration|Achieved Occ|DRAM Through|Compute \(SM\)|Executed Instructions  |Warp Cycles Per Issued" $R/ncu_tf32x3_$C.txt
TESSERA_TEST_SMALL=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='GraphKernelCuda.SandwichMatvecMatchesDirectPath' > $R/memcheck_sandwich_$C.txt 2>&1; echo memcheck rc=$?; tail -1 $R/memcheck_sandwich_$C.txt
timeout 200 $B --json $R/graph_kernel_bench_$C.json > $R/graph_kernel_bench_$C.txt 2>&1; tail -1 $R/graph_kernel_bench_$C.txt | cut -c1-2500
timeout 100 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -1 $R/pytest_$C.txt
cd $OUT && tar czf r.tgz r && rm -rf r
