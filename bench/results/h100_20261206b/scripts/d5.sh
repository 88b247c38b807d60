# session 2026-12-06 (tenth) call 5: why cuda.multi_query is level with cuda.fused. The folded
# layer's attention alone (attention_bench --shared-kv, prebuilt) on a PubMed-sized BA graph and the
# grid, both variants, and ncu of each forward kernel on the BA graph.
R=$OUT; set -x
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)")
export TESSERA_COMMIT=$(cat /tmp/bins/COMMIT)
B=/tmp/bins/attention_bench
BA=ba:nodes=19717,m=2
for v in cuda.fused cuda.multi_query; do
  TESSERA_VARIANT_ATTENTION=$v timeout 30 $B --device cuda --spec $BA --hc 8x128,2x128 --shared-kv --reps 20 > $R/bench_ba_$v.txt 2>&1; cat $R/bench_ba_$v.txt
done
for v in cuda.fused cuda.multi_query; do
  for hc in 8x128 2x128; do
    TESSERA_VARIANT_ATTENTION=$v timeout 40 ncu --clock-control none -k regex:forward_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats $B --device cuda --spec $BA --hc $hc --shared-kv --reps 3 > $R/ncu_ba_${hc}_$v.txt 2>&1; echo ncu $v $hc rc=$?
    grep -E "Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Eligible Warps|No Eligible|Warp Cycles Per Issued|L2 Hit|L1/TEX Hit|Block Limit Reg|Waves Per SM" $R/ncu_ba_${hc}_$v.txt | head -16
  done
done
for v in cuda.fused cuda.multi_query; do
  TESSERA_VARIANT_ATTENTION=$v timeout 40 $B --device cuda --spec grid:rows=1024,cols=1024 --hc 8x128 --shared-kv --reps 10 > $R/bench_grid_$v.txt 2>&1; grep -v "^graph" $R/bench_grid_$v.txt
done
