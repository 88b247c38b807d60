# session 2026-12-06 (twelfth) call A: host profiles of the small-graph attention rows at HEAD.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
lscpu | head -20 > $R/cpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
for spec in "transformer 4x64 cora" "gatv2 4x64 cora" "transformer 8x128 cora" "transformer 2x256 pubmed" "gatv2 4x64 pubmed"; do
  set -- $spec
  timeout 100 python3 bench/host_overhead.py --layer $1 --hc $2 --graph $3 --data-dir $D --width 128 --profile forward+backward > $R/host_$1_$2_$3.txt 2>&1; echo $spec rc=$?
  timeout 60 python3 bench/host_overhead.py --layer $1 --hc $2 --graph $3 --data-dir $D --width 128 --profile forward > $R/hostfwd_$1_$2_$3.txt 2>&1; echo $spec fwd rc=$?
  echo elapsed $(( $(date +%s) - T0 ))
done
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
tail -20 $R/steps.txt; for f in $R/host_*.txt; do echo "== $f"; head -8 $f; done
