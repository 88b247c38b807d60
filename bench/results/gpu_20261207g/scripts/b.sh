# Call B (warm, call A's H100): why the folded form did not win on Cora (call A: 0.10-0.12 against
# 0.11-0.13 ms at 8x128): the torch profiler's kernel table and timeline of the Cora 8x128 forward
# without autograd, the fold forced off and on.
source scripts/device_call.sh
(
set -x
device_build "tessera_torch"
elapsed
for f in 0 1; do
  TESSERA_TRANSFORMER_FOLD=$f timeout 60 python3 bench/attention_profile.py --graph cora --data-dir $D \
    --layer transformer --hc 8x128 --forward-only --timeline > $R/profile_cora_8x128_fold$f.txt 2>&1
  echo "profile fold$f rc=$?"
done
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
for f in 0 1; do tar xzf $OUT/r.tgz -O r/profile_cora_8x128_fold$f.txt | tail -40 | cut -c1-160; done
