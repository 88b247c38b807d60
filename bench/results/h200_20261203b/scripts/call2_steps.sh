set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 100 build-gpu/tests/tessera_tests --gtest_filter='Attention*Cuda*:AttentionCuda*:Linear*' > $R/attention_linear_cuda_tests_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/attention_linear_cuda_tests_$C.txt
timeout 100 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
TESSERA_TEST_SMALL=1 timeout 80 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='AttentionCuda.DropoutSymmetricAndHeavyRowsMatchReference:AttentionCuda.FusedMatchesReference*' > $R/memcheck_attention_$C.txt 2>&1; tail -n 2 $R/memcheck_attention_$C.txt
timeout 60 python3 .carry/exp/colsum_probe.py > $R/colsum_probe_$C.txt 2>&1; cat $R/colsum_probe_$C.txt
timeout 110 python3 bench/attention_layer_bench.py --layers gatv2 --budget-s 90 --json $R/attention_gatv2_$C.json > $R/attention_gatv2_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_gatv2_$C.txt | tail -n 22
which ncu && timeout 60 ncu --kernel-name regex:csr --launch-skip 1 --launch-count 4 --section SpeedOfLight --section LaunchStats --section Occupancy python3 .carry/exp/spmm_probe.py pubmed cora > $R/ncu_spmm_$C.txt 2>&1; grep -E "csr_|Duration|DRAM Through|Memory Through|Achieved Occ|Grid Size|Registers|rows" $R/ncu_spmm_$C.txt | head -60
