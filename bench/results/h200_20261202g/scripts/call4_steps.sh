set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu
(cd build-gpu && timeout 150 ctest -R 'Cuda|MmaFragments' -E DenseTiles > $R/ctest_cuda_$C.txt 2>&1); tail -n 4 $R/ctest_cuda_$C.txt
