# session 2026-12-06 (fourteenth) call D, on the machine call C left warm: the planned call less C's runs:
# (C: the conformance and memcheck of cuda.csr.feature_tiles, spmm_limits_bench; see c_lean.sh)
# the SpMM floor's own bytes streamed on this card (spmm_limits_bench) and the GCN layer's SpMM shares
# in the same call (gcn_bench, width 256), then with cuda.csr.feature_tiles forced on the short-row
# graphs; the residual's L2 prefetch in the resident projection (A/B on the grid 4x64 Transformer
# forward, the linear conformance test); the Transformer's folded-operator memo A/B on PubMed.
# In order of need; writes straight under $OUT/r, so a run cut by its time limit returns what it finished.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
echo elapsed $(( $(date +%s) - T0 ))
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 python3 bench/gcn_bench.py --widths 256 --data-dir $D --budget-s 80 --json $R/gcn_bench_$C.json > $R/gcn_bench_$C.txt 2>&1; echo gcn rc=$?
TESSERA_VARIANT_SPMM=cuda.csr.feature_tiles timeout 60 python3 bench/gcn_bench.py --widths 256 --graphs cora,pubmed,grid --data-dir $D --budget-s 50 --json $R/gcn_bench_feature_tiles_$C.json > $R/gcn_bench_feature_tiles_$C.txt 2>&1; echo gcn_ft rc=$?
echo elapsed $(( $(date +%s) - T0 ))
for pf in 0 1; do
  TESSERA_LINEAR_PREFETCH_R=$pf timeout 40 python3 bench/attention_profile.py --graph grid --hc 4x64 --data-dir $D --forward-only --rows 6 > $R/prefetch${pf}_grid_4x64.txt 2>&1; echo prefetch$pf rc=$?
done
echo elapsed $(( $(date +%s) - T0 ))
TESSERA_TRANSFORMER_FOLD_MEMO=1 timeout 45 python3 bench/attention_layer_bench.py --layers transformer --graphs pubmed --hc 8x128,2x256 --data-dir $D --budget-s 35 --json $R/tf_pubmed_memo1_pyg_$C.json > $R/tf_pubmed_memo1_pyg_$C.txt 2>&1; echo tf1 rc=$?
TESSERA_TRANSFORMER_FOLD_MEMO=0 timeout 30 python3 bench/attention_layer_bench.py --no-pyg --layers transformer --graphs pubmed --hc 8x128,2x256 --data-dir $D --budget-s 20 --json $R/tf_pubmed_memo0_$C.json > $R/tf_pubmed_memo0_$C.txt 2>&1; echo tf0 rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
grep -h -E "spmm of floor|median" $R/gcn_bench_*.txt; grep -h -E "^==|resident|forward_kernel|Self CUDA time total" $R/prefetch*_grid_4x64.txt | cut -c1-170
grep -h -E "transformer H" $R/tf_pubmed_*.txt
