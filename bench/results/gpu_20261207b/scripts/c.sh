# session 2026-12-07 (nineteenth) call C, as planned in gpu_20261207 (eighteenth; it never ran there), at a commit that also caches the attention launch's occupancy query: after calls A and B there, with the prepared projections on by
# default and the CUDA fold-rule test counting the one op's folded calls: pytest test_linear.py +
# test_attention.py; the host time per call (bench/host_path_probe.py); the PubMed 4x64 Transformer
# forward's timeline (call A found it GPU-bound at 0.19 ms, not host-bound as predicted), and PubMed
# 2x256's; the folded form forced off and on without autograd at C < K (4x64: Cora, PubMed, grid;
# TESSERA_TRANSFORMER_FOLD=0/1/0/1), where it has not run unforced; the Transformer against PyG on the
# five graphs with the defaults (one op, prepared projections). END (default 560): the second the
# layer bench must end by (skipped when that leaves under 150 s). TIMELINES: the PubMed rows to
# profile (default 4x64 2x256; empty: none); PROBE=0 skips the probe; FOLD_REPS: the fold A/B's rounds
# (default 1 2). Carry as call A; the working tree must be the commit.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch tessera_tests"
elapsed
timeout 120 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 5 $R/pytest_$C.txt
elapsed
[ "${PROBE:-1}" = 1 ] && { timeout 60 python3 bench/host_path_probe.py --graph cora --data-dir $D > $R/host_path_probe.txt 2>&1; echo probe rc=$?; }
for hc in ${TIMELINES-4x64 2x256}; do
  timeout 45 python3 bench/attention_profile.py --layer transformer --graph pubmed --hc $hc --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_transformer_pubmed_$hc.txt 2>&1; echo timeline $hc rc=$?
done
elapsed
for rep in ${FOLD_REPS-1 2}; do for f in 0 1; do
  TESSERA_TRANSFORMER_FOLD=$f timeout 50 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs cora,pubmed,grid --hc 4x64 --data-dir $D --budget-s 35 --json $R/fold${f}_rep${rep}.json > $R/fold${f}_rep${rep}.txt 2>&1; echo fold$f rep$rep rc=$?
done; done
elapsed
L=$(( ${END:-560} - ($(date +%s) - T0) ))
if [ $L -gt 150 ]; then  # else skipped: the device budget left did not cover it
  timeout $L python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 60 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
fi
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed"
tar xzf $OUT/r.tgz -O r/host_path_probe.txt 2>/dev/null | tail -n 6
for f in fold0_rep1 fold1_rep1 fold0_rep2 fold1_rep2; do echo $f; tar xzf $OUT/r.tgz -O r/$f.txt 2>/dev/null | grep fwd | cut -c1-80; done
tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" 2>/dev/null | grep -E "fwd|medians" | cut -c1-200
