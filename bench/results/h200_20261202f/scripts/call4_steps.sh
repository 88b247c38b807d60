set -x
R=$OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1 &
(sleep 15; cd .carry/old && TESSERA_CARRY=$PWD/.. BUILD=build-old BUILD_TARGETS=tessera_torch bash scripts/gpu_session.sh build > $R/build_old.txt 2>&1) &
wait; tail -n 2 $R/build.txt; tail -n 2 $R/build_old.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu
NEW="env TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python"
OLD="env TESSERA_COMMIT=2c227b0 TESSERA_LIBRARY=$PWD/.carry/old/build-old/src/torch/libtessera_torch.so PYTHONPATH=$PWD/.carry/old/python"
(cd build-gpu && timeout 150 ctest -R 'Cuda' -E DenseTiles --output-on-failure > $R/ctest_cuda.txt 2>&1); tail -n 4 $R/ctest_cuda.txt
TESSERA_TEST_SMALL=1 timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='SpmmConformance.CudaVariantsMatchReferenceInt32' > $R/memcheck_spmm.txt 2>&1; echo memcheck rc=$?; tail -n 2 $R/memcheck_spmm.txt
for i in 1 2; do
  $OLD timeout 60 python3 .carry/old/bench/gcn_bench.py --graphs cora,pubmed --reps 50 --json $R/small_old_$i.json > $R/small_old_$i.txt 2>&1; grep -E "median over all" $R/small_old_$i.txt
  $NEW timeout 60 python3 bench/gcn_bench.py --graphs cora,pubmed --reps 50 --json $R/small_new_$i.json > $R/small_new_$i.txt 2>&1; grep -E "median over all" $R/small_new_$i.txt
done
$NEW timeout 150 python3 bench/gcn_bench.py --json $R/gcn_bench.json > $R/gcn_bench.txt 2>&1; tail -n 5 $R/gcn_bench.txt
