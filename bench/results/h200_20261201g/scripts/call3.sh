set -x
mkdir -p $OUT/r
C=$(cat .carry/COMMIT | cut -c1-7)
bash scripts/gpu_session.sh build > $OUT/r/build.txt 2>&1; tail -3 $OUT/r/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) PYTHONPATH=$PWD/python TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so
timeout 200 python3 bench/attention_layer_bench.py --json $OUT/r/attention_layer_full_$C.json > $OUT/r/attention_layer_full_$C.txt 2>&1; tail -25 $OUT/r/attention_layer_full_$C.txt
timeout 100 build-gpu/bench/attention_bench --device cuda --json $OUT/r/attention_kernels_rmat_$C.json > $OUT/r/attention_kernels_rmat_$C.txt 2>&1; cat $OUT/r/attention_kernels_rmat_$C.txt
timeout 100 build-gpu/bench/attention_bench --device cuda --spec grid:rows=1024,cols=1024 --json $OUT/r/attention_kernels_grid_$C.json > $OUT/r/attention_kernels_grid_$C.txt 2>&1; cat $OUT/r/attention_kernels_grid_$C.txt
timeout 120 python3 bench/attention_layer_bench.py --edge-dim 8 --hc 4x64 --json $OUT/r/attention_layer_edge8_$C.json > $OUT/r/attention_layer_edge8_$C.txt 2>&1; tail -12 $OUT/r/attention_layer_edge8_$C.txt
timeout 80 ncu --profile-from-start off -k regex:forward_kernel --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section SchedulerStats python3 .carry/diag/fb_once.py rmat:scale=20,degree=16,seed=1 TransformerConv 4 64 fwd > $OUT/r/ncu_rmat_transformer_fwd_$C.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
