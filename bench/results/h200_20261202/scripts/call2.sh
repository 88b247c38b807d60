# Call 2: the cheaper split and addressing (tf32x3 stage). Graph-kernel ctest, dense-tile A/B
# (FFMA vs tf32x3 with 8 or 4 m16 tiles per warp, alternated twice), SASS histogram and ncu of the
# 4-tile stage, then the full graph-kernel benchmark at the default.
set -x
R=$OUT/r; mkdir -p $R
C=$(cut -c1-7 .carry/COMMIT)
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT)
(cd build-gpu && timeout 200 ctest -R 'GraphKernelCuda|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $R/ctest_graph_kernel_$C.txt 2>&1) &
O=build-gpu/src/CMakeFiles/tessera_core.dir/cuda/kernels/marginalized_kernel.cu.o
for t in 4 8; do
cuobjdump -sass $O | awk -v k="sandwich_tf32x3_kernelILi$t" '$0 ~ "Function : .*"k {p=1; print; next} p && /Function : / {p=0} p' > $R/sass_tf32x3_${t}_$C.txt
echo "sass tiles=$t:"; grep -E '/\*[0-9a-f]{4}\*/' $R/sass_tf32x3_${t}_$C.txt | awk '{for(i=2;i<=NF;i++) if ($i ~ /^[A-Z][A-Z0-9]+(\.|$)/) {split($i,a,"."); print a[1]; break}}' | sort | uniq -c | sort -rn | head -12 | tr '\n' ' '; echo
done
wait; tail -3 $R/ctest_graph_kernel_$C.txt
B=build-gpu/bench/graph_kernel_bench
for round in 1 2; do for v in 0 8 4; do
  TESSERA_MGK_TF32=$v timeout 60 $B --sets none --synthetic 0 --fit-check 0 --dense-band 16 --json $R/gk_dense_${C}_tf32_${v}_r$round.json > $R/gk_dense_${C}_tf32_${v}_r$round.txt 2>&1
  python3 -c "import json;s=json.load(open('$R/gk_dense_${C}_tf32_${v}_r$round.json'))['summary'];print('tf32=$v r$round', ' '.join('%s=%.3f'%(k.replace('dense_band12_','').replace('_matvec_kernel_share_of_fp32_peak_executed',''),v) for k,v in s.items() if 'matvec_kernel' in k))"
done; done
timeout 100 ncu --clock-control none -k regex:sandwich_tf32x3 --launch-count 2 --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats $B --sets none --synthetic 0 --fit-check 0 --dense-band 1 > $R/ncu_tf32x3_$C.txt 2>&1; grep -E "Duration|Achieved Occ|DRAM Through|Compute \(SM\)|Executed Instructions  |Warp Cycles Per Issued" $R/ncu_tf32x3_$C.txt
timeout 200 $B --json $R/graph_kernel_bench_$C.json > $R/graph_kernel_bench_$C.txt 2>&1; tail -1 $R/graph_kernel_bench_$C.txt | cut -c1-1500
cd $OUT && tar czf r.tgz r && rm -rf r
