set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 30 python3 bench/host_overhead.py --layer gatv2 --width 128 --data-dir .carry/data > $R/host_gatv2_$C.txt 2>&1; head -n 7 $R/host_gatv2_$C.txt
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 70 python3 bench/attention_layer_bench.py --graphs cora,pubmed --data-dir .carry/data --budget-s 55 --json $R/attention_small_$C.json > $R/attention_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_small_$C.txt | tail -n 16
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 40 python3 bench/gcn_bench.py --graphs cora,pubmed --data-dir .carry/data --budget-s 30 --json $R/gcn_small_$C.json > $R/gcn_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/gcn_small_$C.txt | head -n 8
