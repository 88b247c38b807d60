set -x
R=$OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
BUILD_TARGETS="tessera_tests spmm_bench tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 100 build-gpu/bench/spmm_bench --graphs grid,rmat,clustered --widths 64,256,512 --variants cuda.csr.warp_row,cuda.csr.row_runs,cuda.cusparse --json $R/spmm_bench.json > $R/spmm_bench.txt 2>&1; echo spmm_bench rc=$?; grep -v WARN $R/spmm_bench.txt | tail -30
timeout 60 python3 bench/gcn_bench.py --json $R/gcn_bench_warp_row.json > $R/gcn_bench_warp_row.txt 2>&1; tail -n 4 $R/gcn_bench_warp_row.txt
TESSERA_VARIANT_SPMM=cuda.csr.row_runs timeout 60 python3 bench/gcn_bench.py --json $R/gcn_bench_row_runs.json > $R/gcn_bench_row_runs.txt 2>&1; tail -n 4 $R/gcn_bench_row_runs.txt
TESSERA_TEST_SMALL=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='SpmmConformance.CudaVariantsMatchReferenceInt32' > $R/memcheck_spmm.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_spmm.txt
timeout 150 python3 -m pytest -q tests/python > $R/pytest.txt 2>&1; tail -n 2 $R/pytest.txt
