# session 2026-12-07 (nineteenth) call F, run as one command line on the machine call E left warm
# (its build-gpu kept, so the build was a no-op): the Transformer against PyG on the five graphs at
# the rule reverted to C >= K. Recorded here as it ran:
source scripts/device_call.sh; (device_build tessera_torch; timeout 150 python3 bench/attention_layer_bench.py --layers transformer --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s 110 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?; elapsed) > $R/steps.txt 2>&1; device_pack; tar xzf $OUT/r.tgz -O r/steps.txt | tail -3; tar xzf $OUT/r.tgz --wildcards -O "r/attention_layer*.txt" | grep -E "fwd|medians" | cut -c1-200
