# session 2026-12-06 (eleventh) call 1: cuda.multi_query at 3 or 4 blocks per SM. Modes
# (TESSERA_MQ_KERNEL, a temporary switch in the launcher): 0 = as landed (min 2 blocks, queries in
# registers, 93 registers at 4 heads of K = 128), 1 = min 3 blocks (80 registers, 28 bytes spilled),
# 2 = min 3 blocks with the queries in shared memory (80, no spill), 3 = min 4 blocks, queries in
# shared memory (64, 36 bytes spilled). Prebuilt binaries; conformance test per mode, racecheck and
# memcheck of modes 2 and 3, the folded attention alone per mode and cuda.fused, ncu of each.
R=$OUT; set -x
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)
B=/tmp/bins/attention_bench T=/tmp/bins/tessera_tests
BA=ba:nodes=19717,m=2
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt
for mode in 0 1 2 3; do
  TESSERA_MQ_KERNEL=$mode timeout 60 stdbuf -oL $T --gtest_filter='AttentionCuda.MultiQuery*' > $R/test_mode$mode.txt 2>&1; echo test mode $mode rc=$?; tail -3 $R/test_mode$mode.txt
done
run() {  # name, env...
  local name=$1; shift
  env "$@" timeout 30 $B --device cuda --spec $BA --hc 8x128,2x128 --shared-kv --reps 20 > $R/bench_ba_$name.txt 2>&1; grep -v "^graph" $R/bench_ba_$name.txt
  env "$@" timeout 40 $B --device cuda --spec grid:rows=1024,cols=1024 --hc 8x128 --shared-kv --reps 10 > $R/bench_grid_$name.txt 2>&1; grep -v "^graph" $R/bench_grid_$name.txt
  for hc in 8x128 2x128; do
    env "$@" timeout 40 ncu --clock-control none -k regex:forward_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats $B --device cuda --spec $BA --hc $hc --shared-kv --reps 3 > $R/ncu_ba_${hc}_$name.txt 2>&1; echo ncu $name $hc rc=$?
    grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Eligible Warps|No Eligible|Block Limit Reg|Block Limit Shared" $R/ncu_ba_${hc}_$name.txt | head -10
  done
}
run fused TESSERA_VARIANT_ATTENTION=cuda.fused
for mode in 0 1 2 3; do run mq$mode TESSERA_VARIANT_ATTENTION=cuda.multi_query TESSERA_MQ_KERNEL=$mode; done
# the order again, against drift: mode 0 and 2 once more
for mode in 2 0; do
  TESSERA_VARIANT_ATTENTION=cuda.multi_query TESSERA_MQ_KERNEL=$mode timeout 30 $B --device cuda --spec $BA --hc 8x128,2x128 --shared-kv --reps 20 > $R/bench_ba_mq${mode}b.txt 2>&1; grep -v "^graph" $R/bench_ba_mq${mode}b.txt
done
for mode in 2 3; do
  TESSERA_MQ_KERNEL=$mode TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool racecheck $T --gtest_filter='AttentionCuda.MultiQuery*' > $R/racecheck_mode$mode.txt 2>&1; echo racecheck $mode rc=$?; tail -2 $R/racecheck_mode$mode.txt
  TESSERA_MQ_KERNEL=$mode TESSERA_TEST_SMALL=1 timeout 60 compute-sanitizer --tool memcheck $T --gtest_filter='AttentionCuda.MultiQuery*' > $R/memcheck_mode$mode.txt 2>&1; echo memcheck $mode rc=$?; tail -2 $R/memcheck_mode$mode.txt
done
