# call 2: why f16 GATv2 with edge features is 2.5x slower than f32 on R-MAT (profile), and the fp32
# self-loop fill.
set -x
R=$OUT/r; mkdir -p $R
bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
# (a self-loop-fill probe ran here and failed on an import path; the layer benchmark below measured the change)
for l in gatv2 transformer; do for d in f16 f32; do
  timeout 100 python3 bench/attention_profile.py --layer $l --dtype $d --edge-dim 8 --forward-only --rows 12 > $R/profile_${l}_${d}_edge8_fwd.txt 2>&1
  grep -E "^==|Self CUDA time total" $R/profile_${l}_${d}_edge8_fwd.txt
done; done
timeout 100 python3 bench/attention_profile.py --layer gatv2 --dtype f16 --edge-dim 8 --rows 16 > $R/profile_gatv2_f16_edge8_fb.txt 2>&1; grep -E "^==" $R/profile_gatv2_f16_edge8_fb.txt
timeout 150 python3 bench/attention_layer_bench.py --json $R/attention_edge_f16.json --dtype f16 --no-pyg --edge-dim 8 --graphs rmat,grid --hc 4x64,2x256 --budget-s 120 > $R/attention_edge_f16.txt 2>&1
grep -E "H=" $R/attention_edge_f16.txt
