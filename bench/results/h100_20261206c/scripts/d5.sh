# session 2026-12-06 (eleventh) call 5 (H100): does cuda.multi_query lose at 2 heads per item in the
# folded layer? The folded TransformerConv (TESSERA_TRANSFORMER_FOLD=1) at 2x256 on PubMed and the grid,
# input width K = 128 (2 heads per item, queries in registers) and K = 256 (queries in shared memory),
# with cuda.fused and cuda.multi_query forced in turn, twice (A B A B), tessera alone. Commit 51683b7.
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
export TESSERA_TRANSFORMER_FOLD=1
for rep in 1 2; do for w in 128 256; do for v in cuda.fused cuda.multi_query; do
  L=$(( 500 - ($(date +%s) - T0) )); [ $L -gt 20 ] || continue
  TESSERA_VARIANT_ATTENTION=$v timeout $L python3 bench/attention_layer_bench.py --layers transformer --graphs pubmed,grid --hc 2x256 --width $w --no-pyg --budget-s 40 --data-dir $ROOT/.carry/data --json $R/fold_${v}_w${w}_$rep.json > $R/fold_${v}_w${w}_$rep.txt 2>&1; echo $v w$w rep$rep rc=$?
  grep "transformer H" $R/fold_${v}_w${w}_$rep.txt | cut -c1-110
done; done; done
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
grep -E "rc=|transformer H|elapsed" $R/steps.txt | cut -c1-150
