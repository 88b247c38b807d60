# session 2026-12-06 (fifteenth) call B: call A's heads_at_a_time_probe found the per-head GATv2
# step's gradients O(1e-2) off the layer's on the GPU (exact on the CPU). Which side: one
# multi-head attention call against per-head calls on the same inputs (heads_split_check.py: ops
# only, strided and contiguous head columns, kept schedules and anonymous graph), then the probe
# on Cora with each side's gradients against PyG's (cut to fit the 382 s of device time left).
export PYTHONUNBUFFERED=1
R=$OUT/r; rm -rf $R; mkdir -p $R  # a reused machine can hold an earlier call's files there
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
timeout 60 python3 bench/results/gpu_20261206f/scripts/heads_split_check.py $D > $R/heads_split_check.txt 2>&1; echo split rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 40 python3 bench/heads_at_a_time_probe.py --graphs cora --data-dir $D --reps 3 --json $R/probe_strided.json > $R/probe_strided.txt 2>&1; echo probe rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
for f in heads_split_check probe_strided; do tar xzf $OUT/r.tgz -O r/$f.txt | grep -v -E "^wrote|UserWarning|_warn_once" | cut -c1-400; done
