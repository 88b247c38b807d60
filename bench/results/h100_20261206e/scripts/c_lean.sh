# session 2026-12-06 (fourteenth) call C, lean (prebuilt binaries of a31faa1 from
# scripts/pack_prebuilt.sh: four refused starts left too little device time for a build): the SpMM
# floor's own bytes streamed (spmm_limits_bench); the conformance of cuda.csr.feature_tiles and of the
# resident projection's residual prefetch; memcheck of the CUDA SpMM variants (small sizes).
R=$OUT/r; mkdir -p $R
(
set -x
T0=$(date +%s)
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT); C=$TESSERA_COMMIT
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
timeout 60 /tmp/bins/spmm_limits_bench --data-dir .carry2/data --json $R/spmm_limits_$C.json > $R/spmm_limits_$C.txt 2>&1; echo limits rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 /tmp/bins/tessera_tests --gtest_filter='SpmmConformance.*:LinearCuda.EveryVariantMatchesReference' > $R/tests_spmm_linear_$C.txt 2>&1; echo tests rc=$?
echo elapsed $(( $(date +%s) - T0 ))
TESSERA_TEST_SMALL=1 timeout 90 compute-sanitizer --tool memcheck /tmp/bins/tessera_tests --gtest_filter='SpmmConformance.CudaVariantsMatchReferenceInt32' > $R/memcheck_spmm_$C.txt 2>&1; echo memcheck rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
grep -E "rc=|elapsed" $R/steps.txt; cat $R/gpu.txt; grep -v "^wrote" $R/spmm_limits_*.txt
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED" $R/tests_spmm_linear_*.txt | head; tail -n 3 $R/memcheck_spmm_*.txt
