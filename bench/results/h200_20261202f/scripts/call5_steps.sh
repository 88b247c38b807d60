set -x
R=$OUT/r
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 60 build-gpu/tests/tessera_tests --gtest_filter='Spmm*Cuda*:*Spmm*Cuda*' > $R/spmm_cuda_tests.txt 2>&1; echo rc=$?; tail -n 3 $R/spmm_cuda_tests.txt
timeout 45 python3 -m pytest -q tests/python -k "gcn or spmm" > $R/pytest_gcn_spmm.txt 2>&1; tail -n 1 $R/pytest_gcn_spmm.txt
