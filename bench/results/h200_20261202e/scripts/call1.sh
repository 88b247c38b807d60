# call 1 (2026-12-02 e): verify af2b4b2 + the row_runs SpMM variants (conformance, memcheck), then
# time them against warp_row (spmm_bench, same binary) and the GCN layer with each forced.
set -x
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 120 build-gpu/bench/spmm_bench --graphs grid,rmat,clustered --widths 64,256,512 --variants cuda.csr.warp_row,cuda.csr.row_runs,cuda.csr.row_runs4,cuda.cusparse --json $R/spmm_bench.json > $R/spmm_bench.txt 2>&1; echo spmm_bench rc=$?; grep -v WARN $R/spmm_bench.txt | tail -40
(cd build-gpu && timeout 170 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 4 $R/ctest_cuda.txt
(cd build-gpu && timeout 60 ctest -R 'AttentionLayers' --output-on-failure > $R/ctest_attention_layers.txt 2>&1); tail -n 3 $R/ctest_attention_layers.txt
TESSERA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='SpmmConformance.CudaVariantsMatchReferenceInt32' > $R/memcheck_spmm.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_spmm.txt
timeout 90 python3 bench/gcn_bench.py --json $R/gcn_bench_warp_row.json > $R/gcn_bench_warp_row.txt 2>&1; tail -n 5 $R/gcn_bench_warp_row.txt
TESSERA_VARIANT_SPMM=cuda.csr.row_runs timeout 90 python3 bench/gcn_bench.py --json $R/gcn_bench_row_runs.json > $R/gcn_bench_row_runs.txt 2>&1; tail -n 5 $R/gcn_bench_row_runs.txt
cd $OUT && tar czf r.tgz r && rm -rf r
