# session 2026-12-06 (twelfth) call D: a second sample of the attention layers against PyG on all
# five graphs, same commit as call C (23ca838), then the two small graphs once more.
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
timeout 240 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 200 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
echo elapsed $(( $(date +%s) - T0 ))
L=$(( 330 - ($(date +%s) - T0) ))
[ $L -gt 40 ] && timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed --data-dir $D --budget-s $(( L - 15 )) --json $R/attention_small_$C.json > $R/attention_small_$C.txt 2>&1; echo small rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
grep -v "^wrote" $R/attention_layer_*.txt $R/attention_small_*.txt | cut -c1-230; grep -E "rc=|elapsed" $R/steps.txt | tail -6
