# session 2026-12-04 call 5: ncu of the wgmma projection at K = 128 (what bounds it at ~70 TFLOP/s).
R=$OUT/r; mkdir -p $R
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 2 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 100 ncu --clock-control none -k regex:linear_wgmma_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats --section LaunchStats python3 .carry/exp/ncu_wgmma.py > $R/ncu_wgmma_k128_$C.txt 2>&1; echo rc=$?
grep -E "Duration|Throughput|Occupancy|Registers|Cycles Per|Issue|Pipe|Eligible|Shared|Stall|OPT|Bank" $R/ncu_wgmma_k128_$C.txt | head -50
cd $OUT && tar czf r.tgz r && rm -rf r
