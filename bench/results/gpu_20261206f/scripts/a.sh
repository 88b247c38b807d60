# session 2026-12-06 (fifteenth) call A, at the fourteenth session's end (25c506a) plus attention_profile --timeline:
# the attention layers against PyG on all five graphs (the Transformer's forward median with the
# folded-operator memo, on by default); the memo's alternated A/B on PubMed (8x128, 2x256: off, on,
# off, on, tessera alone); spmm_limits_bench at HEAD (the Evictor refactor, first GPU run);
# where the grid 4x64 and PubMed 8x128 Transformer forwards' event-timed span goes (attention_profile
# --timeline); GATv2 with the heads one at a time (heads_at_a_time_probe.py);
# pytest test_attention.py (outputs and gradients against PyG). Results straight under $OUT/r,
# packed into one tarball at the end.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch spmm_limits_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
timeout 200 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 160 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
echo elapsed $(( $(date +%s) - T0 ))
for rep in 1 2; do for m in 0 1; do
  TESSERA_TRANSFORMER_FOLD_MEMO=$m timeout 30 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs pubmed --hc 8x128,2x256 --data-dir $D --budget-s 20 --json $R/memo${m}_rep${rep}.json > $R/memo${m}_rep${rep}.txt 2>&1; echo memo$m rep$rep rc=$?
done; done
echo elapsed $(( $(date +%s) - T0 ))
for row in "grid 4x64" "pubmed 8x128"; do set -- $row
  timeout 45 python3 bench/attention_profile.py --graph $1 --hc $2 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_tf_$1_$2.txt 2>&1; echo timeline $1 $2 rc=$?
done
echo elapsed $(( $(date +%s) - T0 ))
timeout 120 python3 bench/heads_at_a_time_probe.py --data-dir $D --json $R/heads_at_a_time_$C.json > $R/heads_at_a_time_$C.txt 2>&1; echo probe rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 60 build-gpu/bench/spmm_limits_bench --data-dir $D --json $R/spmm_limits_$C.json > $R/spmm_limits_$C.txt 2>&1; echo limits rc=$?
echo elapsed $(( $(date +%s) - T0 ))
L=$(( 560 - ($(date +%s) - T0) ))
timeout $L python3 -m pytest -q tests/python/test_attention.py > $R/pytest_attention_$C.txt 2>&1; echo pytest rc=$?
tail -n 2 $R/pytest_attention_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed"
tar xzf $OUT/r.tgz -O r/gpu.txt
for f in attention_layer memo timeline heads_at_a_time spmm_limits; do tar xzf $OUT/r.tgz --wildcards -O "r/$f*.txt" | grep -v "^wrote" | cut -c1-220; done
