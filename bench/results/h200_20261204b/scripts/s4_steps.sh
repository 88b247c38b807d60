set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests tessera_torch_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -40
eval "$(bash scripts/gpu_session.sh env)"
grep -m1 -o -E "avx512f|avx2" /proc/cpuinfo | head -1; grep -m1 "model name" /proc/cpuinfo
T=build-gpu/tests/tessera_tests
timeout 60 $T --gtest_filter="Attention.*:SegmentReduce.*" > $R/cpu_attention_default_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED" $R/cpu_attention_default_$C.txt | head
TESSERA_CPU_SIMD=sse2 timeout 60 $T --gtest_filter="Attention.*" > $R/cpu_attention_sse2_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED" $R/cpu_attention_sse2_$C.txt | head
timeout 100 ctest --test-dir build-gpu -R Cuda -E "DenseTiles" -j 4 --timeout 95 > $R/ctest_cuda_$C.txt 2>&1; echo rc=$?; grep -E "Failed|tests passed|\*\*\*" $R/ctest_cuda_$C.txt | head
timeout 150 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
