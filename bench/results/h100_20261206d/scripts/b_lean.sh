# session 2026-12-06 (thirteenth) call B, lean (prebuilt binaries of 1defbc7; little device time
# left after refused starts): spmm_limits_bench; the CUDA tests of the four per-graph caches.
R=/tmp/r; mkdir -p $R
(
set -x
T0=$(date +%s)
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT); C=$TESSERA_COMMIT
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
timeout 80 /tmp/bins/spmm_limits_bench --data-dir .carry2/data --json $R/spmm_limits_$C.json > $R/spmm_limits_$C.txt 2>&1; echo limits rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 /tmp/bins/tessera_tests --gtest_filter='SpmmConformance.Cuda*:SddmmConformance.Cuda*:SpmmWsbCuda*:AttentionCuda.Schedules*:AttentionCuda.MultiQuery*:Predict*' > $R/cuda_tests_$C.txt 2>&1; echo tests rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
grep -E "rc=|elapsed" $R/steps.txt; cat $R/gpu.txt; grep -v "^wrote" $R/spmm_limits_*.txt
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED|^\[       OK" $R/cuda_tests_*.txt | head -40
