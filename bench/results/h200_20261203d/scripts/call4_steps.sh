set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 80 python3 -m pytest -q -x tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt; grep -E "^FAILED|Error" $R/pytest_$C.txt | head
cd $OUT && tar czf r_early.tgz r && cd - > /dev/null
timeout 75 python3 bench/attention_layer_bench.py --graphs cora,pubmed --data-dir .carry/data --budget-s 60 --json $R/attention_small_$C.json > $R/attention_small_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_small_$C.txt | tail -n 16
GAP_CASES=pubmed:gatv2,pubmed:transformer timeout 25 python3 .carry/exp/gap_probe.py > $R/gap_probe_$C.txt 2>&1; grep -A12 "==" $R/gap_probe_$C.txt | head -30
