set -x
R=$OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
(cd build-gpu && timeout 170 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 4 $R/ctest_cuda.txt
TESSERA_TEST_SMALL=1 timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='SpmmConformance.CudaVariantsMatchReferenceInt32' > $R/memcheck_spmm.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_spmm.txt
timeout 160 python3 -m pytest -q tests/python > $R/pytest.txt 2>&1; tail -n 2 $R/pytest.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='SpmmConformance.CudaVariantsMatchReferenceInt32' > $R/racecheck_spmm.txt 2>&1; echo racecheck rc=$?; tail -n 2 $R/racecheck_spmm.txt
