set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 100 build-gpu/tests/tessera_tests --gtest_filter='Attention*Cuda*:AttentionCuda*:Linear*' > $R/attention_linear_cuda_tests_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/attention_linear_cuda_tests_$C.txt
timeout 120 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter='LinearCuda.*' > $R/memcheck_linear_$C.txt 2>&1; tail -n 2 $R/memcheck_linear_$C.txt
timeout 120 python3 .carry/exp/host_probe.py > $R/host_probe_$C.txt 2>&1; echo rc=$?; grep -v "^ *aten\|^ *cuda\|---" $R/host_probe_$C.txt | head -n 60
timeout 40 python3 bench/attention_profile.py --graph pubmed --layer gatv2 --hc 8x128 --rows 20 > $R/profile_gatv2_pubmed_8x128_$C.txt 2>&1; tail -n 26 $R/profile_gatv2_pubmed_8x128_$C.txt | cut -c1-100,150-230
timeout 120 python3 bench/gcn_bench.py --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/gcn_bench_$C.txt | tail -n 22
