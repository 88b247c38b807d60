set -x
R=$OUT/r
ROOT=$PWD
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
cd .carry/snap
export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 280 python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $ROOT/.carry/data --budget-s 240 --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $R/attention_layer_$C.txt | tail -n 40
