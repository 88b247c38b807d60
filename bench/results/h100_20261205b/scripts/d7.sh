# session 2026-12-05 (fifth) call 7: the layer bench with interleaved sides (HEAD) against the sequential one (a8a9582's), GATv2 on Cora and PubMed, alternately; the grid for the OOM fallback.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(
set -x
C=$(cat .carry/COMMIT)
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
cp .carry/exp/attention_layer_bench_sequential.py bench/
echo elapsed $(( $(date +%s) - T0 ))
for i in 1 2; do
  timeout 90 python3 bench/attention_layer_bench.py --layers gatv2 --graphs cora,pubmed --data-dir .carry/data --budget-s 80 --json $R/small_interleaved_${i}_$C.json 2>&1 | grep -v "^wrote" | cut -c1-220
  timeout 90 python3 bench/attention_layer_bench_sequential.py --layers gatv2 --graphs cora,pubmed --data-dir .carry/data --budget-s 80 --json $R/small_sequential_${i}_$C.json 2>&1 | grep -v "^wrote" | cut -c1-220
  echo elapsed $(( $(date +%s) - T0 ))
done
L=$(( 540 - ($(date +%s) - T0) )); [ $L -gt 40 ] && timeout $L python3 bench/attention_layer_bench.py --layers gatv2 --graphs grid --hc 8x128,2x256 --budget-s $(( L - 20 )) --json $R/grid_interleaved_$C.json 2>&1 | grep -v "^wrote" | cut -c1-220
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tail -c 7000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
