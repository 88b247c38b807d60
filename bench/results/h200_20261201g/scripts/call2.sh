set -x
mkdir -p $OUT/r
( cd .carry/snap && TESSERA_CARRY=$PWD/.. OUT=$OUT/a BUILD=build-a BUILD_TARGETS=tessera_torch bash scripts/gpu_session.sh build > $OUT/r/build_a.txt 2>&1 ) &
bash scripts/gpu_session.sh build > $OUT/r/build.txt 2>&1; tail -3 $OUT/r/build.txt
wait; tail -3 $OUT/r/build_a.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) PYTHONPATH=$PWD/python
LIBA=$PWD/.carry/snap/build-a/src/torch/libtessera_torch.so LIBB=$PWD/build-gpu/src/torch/libtessera_torch.so
export TESSERA_LIBRARY=$LIBB
(cd build-gpu && timeout 120 ctest -R 'Cuda|Predict|MmaFragments' -E DenseTiles -j 4 --output-on-failure > $OUT/r/ctest_cuda.txt 2>&1); tail -3 $OUT/r/ctest_cuda.txt
timeout 120 python3 -m pytest -q tests/python > $OUT/r/pytest.txt 2>&1; tail -3 $OUT/r/pytest.txt
CASES=("rmat:scale=20,degree=16,seed=1 TransformerConv 4 64" "rmat:scale=20,degree=16,seed=1 GATv2Conv 4 64" "rmat:scale=20,degree=16,seed=1 TransformerConv 2 256" "grid:rows=1024,cols=1024 TransformerConv 8 128" "grid:rows=1024,cols=1024 TransformerConv 2 256" "grid:rows=1024,cols=1024 GATv2Conv 2 256" "clustered:nodes=65536,clusters=256,degree=200,seed=1 TransformerConv 4 64")
for tag in A B A B; do
  L=$LIBA; [ $tag = B ] && L=$LIBB
  TESSERA_LIBRARY=$L timeout 100 python3 .carry/diag/ab_layers.py $tag "${CASES[@]}" >> $OUT/r/ab_schedule.txt 2>&1
done
cat $OUT/r/ab_schedule.txt | grep -v Warn
export TESSERA_TEST_SMALL=1
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.Fused*:AttentionCuda.Unaligned*:AttentionCuda.DropoutSym*' > $OUT/r/memcheck.txt 2>&1; tail -3 $OUT/r/memcheck.txt
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.DropoutSym*' > $OUT/r/racecheck.txt 2>&1; tail -3 $OUT/r/racecheck.txt
cd $OUT && tar czf r.tgz r && rm -rf r
