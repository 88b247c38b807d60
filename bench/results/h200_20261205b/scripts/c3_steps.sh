set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name --format=csv,noheader
BUILD_TARGETS="tessera_tests attention_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
timeout 80 build-gpu/tests/tessera_tests --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_$C.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_$C.txt | head -20
echo elapsed $(( $(date +%s) - T0 ))
B=build-gpu/bench/attention_bench
for spec in grid:rows=1024,cols=1024 rmat:scale=20,degree=4,seed=1 clustered:nodes=65536,clusters=256,degree=200,seed=1; do
  tag=${spec%%:*}; [ $tag = rmat ] && tag=rmat4
  for hg in 0 1; do L=$(left 300); [ $L -gt 15 ] && TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout $L $B --device cuda --spec $spec --hc 4x64,8x128 --reps 5 --kinds transformer --json $R/ab_${tag}_hg${hg}_$C.json > $R/ab_${tag}_hg${hg}_$C.txt 2>&1; echo rc=$? $tag hg=$hg; grep -E "^(gatv2|transformer)" $R/ab_${tag}_hg${hg}_$C.txt | cut -c1-48,160-230; done
done
echo elapsed $(( $(date +%s) - T0 ))
