# Call 4: the end state after the review refactor (stage_planes). Full build, CUDA ctest (but
# DenseTiles), memcheck of the sandwich test, one dense-tile A/B round, pytest.
set -x
R=$OUT/r; mkdir -p $R
C=$(cut -c1-7 .carry/COMMIT)
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 120 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $R/ctest_cuda_$C.txt 2>&1); tail -3 $R/ctest_cuda_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='GraphKernelCuda.SandwichMatvecMatchesDirectPath' > $R/memcheck_sandwich_$C.txt 2>&1; echo memcheck rc=$?; tail -1 $R/memcheck_sandwich_$C.txt
B=build-gpu/bench/graph_kernel_bench
for v in 0 1; do
  TESSERA_MGK_TF32=$v timeout 40 $B --sets none --synthetic 0 --fit-check 0 --dense-band 16 --json $R/gk_dense_${C}_tf32_${v}.json > $R/gk_dense_${C}_tf32_${v}.txt 2>&1
  python3 -c "import json;s=json.load(open('$R/gk_dense_${C}_tf32_${v}.json'))['summary'];print('tf32=$v', ' '.join('%s=%.3f'%(k.replace('dense_band12_','').replace('_matvec_kernel_share_of_fp32_peak_executed',''),v) for k,v in s.items() if 'matvec_kernel' in k))"
done
timeout 90 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -1 $R/pytest_$C.txt
cd $OUT && tar czf r.tgz r && rm -rf r
