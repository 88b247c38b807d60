# session 2026-12-06 (thirteenth) call A: where the Transformer forward's GPU time goes at HEAD
# (grid 4x64 unfolded, PubMed folded and unfolded, Cora), ncu of the grid 4x64 attention kernel.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
for spec in "grid 4x64" "grid 8x128" "pubmed 8x128" "pubmed 4x64" "pubmed 2x256" "cora 4x64" "rmat 4x64"; do
  set -- $spec
  timeout 60 python3 bench/attention_profile.py --graph $1 --hc $2 --data-dir $D --forward-only --rows 16 > $R/prof_tf_$1_$2.txt 2>&1; echo $spec rc=$?
  echo elapsed $(( $(date +%s) - T0 ))
done
timeout 60 python3 bench/attention_profile.py --graph grid --hc 4x64 --layer gatv2 --data-dir $D --forward-only --rows 16 > $R/prof_gatv2_grid_4x64.txt 2>&1
timeout 90 ncu --clock-control none -k regex:"forward_kernel|resident_kernel" --launch-skip 8 --launch-count 4 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats python3 bench/attention_profile.py --graph grid --hc 4x64 --data-dir $D --forward-only > $R/ncu_grid_4x64.txt 2>&1; echo ncu rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
tail -12 $R/steps.txt; for f in $R/prof_*.txt; do echo "== $f"; grep -E "^==|Self CUDA time|kernel|tessera::" $f | cut -c1-60,150-230 | head -14; done
grep -E "^  [a-z_]+.*kernel|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|L2 Hit|Registers Per|Achieved Occupancy" $R/ncu_grid_4x64.txt | head -60
