# session 2026-12-06 (eleventh) call 4: the attention layers against PyG on an H200 (needs_h200: PyG's
# R-MAT rows need up to 101 GiB), commit 51683b7 as in call 3. Results packed into $OUT/r.tgz.
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
L=$(( 560 - ($(date +%s) - T0) ))
timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $ROOT/.carry/data --budget-s $(( L - 90 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
grep -v "^wrote" $R/attention_layer_*.txt | cut -c1-250; tail -5 $R/steps.txt
