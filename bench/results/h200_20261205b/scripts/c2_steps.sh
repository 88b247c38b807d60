set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
T0=$(date +%s)
left() { echo $(( $1 - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name --format=csv,noheader
BUILD_TARGETS="tessera_torch tessera_tests attention_bench spmm_bench segment_reduce_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
grep -B2 -A6 " error\|warning: " $R/build.txt | head -30
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
B=build-gpu/bench
for hg in 1 0; do TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout 90 $B/attention_bench --device cuda --spec rmat:scale=20,degree=16,seed=1 --hc 4x64,8x128 --reps 5 --json $R/attention_bench_hg${hg}_$C.json > $R/attention_bench_hg${hg}_$C.txt 2>&1; echo rc=$?; cut -c1-260 $R/attention_bench_hg${hg}_$C.txt; done
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 $B/spmm_bench --device cuda --graphs grid,rmat --widths 256 --json $R/spmm_bench_$C.json > $R/spmm_bench_$C.txt 2>&1; echo rc=$?; cat $R/spmm_bench_$C.txt
timeout 60 $B/segment_reduce_bench --device cuda --graphs grid --widths 256 --json $R/segment_reduce_bench_$C.json > $R/segment_reduce_bench_$C.txt 2>&1; echo rc=$?; head -12 $R/segment_reduce_bench_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
for hg in 1 0; do L=$(left 330); [ $L -gt 20 ] && TESSERA_ATTENTION_HEAD_GROUPS=$hg timeout $L python3 bench/attention_layer_bench.py --graphs grid --hc 4x64,8x128 --dtype f16 --no-pyg --budget-s 30 --json $R/attention_layer_f16_hg${hg}_$C.json > $R/attention_layer_f16_hg${hg}_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_f16_hg${hg}_$C.txt | cut -c1-200; done
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 400); [ $L -gt 30 ] && timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed --data-dir .carry/data --budget-s $(( L - 20 )) --json $R/attention_layer_small_$C.json > $R/attention_layer_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_small_$C.txt | cut -c1-240
echo elapsed $(( $(date +%s) - T0 ))
L=$(left 460); [ $L -gt 30 ] && timeout $L compute-sanitizer --tool memcheck build-gpu/tests/tessera_tests --gtest_filter="AttentionCuda.HeadGroupsMatchReference" > $R/memcheck_attention_$C.txt 2>&1; echo rc=$?; tail -n 3 $R/memcheck_attention_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
