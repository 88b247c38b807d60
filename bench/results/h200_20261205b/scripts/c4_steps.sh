set -x
R=$OUT/r
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name --format=csv,noheader
tar xJf .carry2/bins.tar.xz -C /tmp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
T=/tmp/bins/tessera_tests; B=/tmp/bins/attention_bench
if ldd $T | grep -q "not found"; then
  d=$(dirname "$(find / -name 'libcudart.so.13*' 2>/dev/null | head -1)"); export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH
fi
ldd $T | grep -E "not found|cudart"
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 $T --gtest_filter="AttentionCuda.*" > $R/attention_cuda_test_default.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|OK \]|Failure" $R/attention_cuda_test_default.txt | head -20
TESSERA_ATTENTION_HEAD_GROUPS=1 timeout 40 $T --gtest_filter="AttentionCuda.HeadGroupsMatchReference" > $R/attention_cuda_test_hg1.txt 2>&1; echo rc=$?; grep -E "FAILED|PASSED|Failure" $R/attention_cuda_test_hg1.txt | head
echo elapsed $(( $(date +%s) - T0 ))
for spec in grid:rows=1024,cols=1024 rmat:scale=20,degree=4,seed=1 clustered:nodes=65536,clusters=256,degree=200,seed=1; do
  tag=${spec%%:*}; [ $tag = rmat ] && tag=rmat4
  for hg in 0 1; do L=$(left 270); [ $L -gt 15 ] && TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout $L $B --device cuda --spec $spec --hc 4x64,8x128 --reps 5 --kinds transformer --json $R/ab_${tag}_hg${hg}.json > $R/ab_${tag}_hg${hg}.txt 2>&1; echo rc=$? $tag hg=$hg; grep -E "^(gatv2|transformer)" $R/ab_${tag}_hg${hg}.txt | cut -c1-48,180-250; done
done
echo elapsed $(( $(date +%s) - T0 ))
