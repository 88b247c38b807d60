set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 150 python3 bench/attention_layer_bench.py --graphs cora,pubmed --reps 20 --json $R/attention_layer_small_$C.json > $R/attention_layer_small_$C.txt 2>&1; echo rc=$?; tail -n 20 $R/attention_layer_small_$C.txt
for L in transformer gatv2; do for G in cora pubmed; do
timeout 60 python3 bench/host_overhead.py --layer $L --graph $G --width 128 --json $R/host_${L}_${G}_$C.json > $R/host_${L}_${G}_$C.txt 2>&1; echo rc=$?; head -n 12 $R/host_${L}_${G}_$C.txt
done; done
timeout 60 python3 bench/attention_profile.py --graph cora --layer transformer --forward-only --rows 20 > $R/profile_transformer_cora_fwd.txt 2>&1; head -40 $R/profile_transformer_cora_fwd.txt
timeout 60 python3 bench/attention_profile.py --graph grid --layer transformer --forward-only --rows 20 > $R/profile_transformer_grid_fwd.txt 2>&1; head -40 $R/profile_transformer_grid_fwd.txt
