set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
ROOT=$PWD
(cd .carry/snap && TESSERA_CARRY=$ROOT/.carry BUILD=build-old BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build_old.txt 2>&1); tail -n 3 $R/build_old.txt
eval "$(bash scripts/gpu_session.sh env)"
NEWLIB=$TESSERA_LIBRARY
OLDLIB=$ROOT/.carry/snap/build-old/src/torch/libtessera_torch.so
ls -la $OLDLIB $NEWLIB
for round in 1 2; do
for side in old new; do
  if [ $side = old ]; then export TESSERA_LIBRARY=$OLDLIB TESSERA_COMMIT=$(cat .carry/OLD_COMMIT); else export TESSERA_LIBRARY=$NEWLIB TESSERA_COMMIT=$C; fi
  timeout 100 python3 bench/attention_layer_bench.py --no-pyg --graphs grid,pubmed --data-dir .carry/data --budget-s 70 --json $R/ab_${side}_${round}.json > $R/ab_${side}_${round}.txt 2>&1; echo $side rc=$?; grep -E "gatv2|transformer" $R/ab_${side}_${round}.txt | grep -v medians | cut -c1-90
done
done
