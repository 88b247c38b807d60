# prof_fb on build A (default) and build B (TESSERA_ATTN_BWD_BLOCKS=4), same machine, same run
set -u
for b in A B; do
  dir=build-gpu; [ $b = B ] && dir=build-gpu-b
  export TESSERA_LIBRARY=$PWD/$dir/src/torch/libtessera_torch.so
  for cfg in "rmat:scale=20,degree=16,seed=1 TransformerConv 4 64" "rmat:scale=20,degree=16,seed=1 GATv2Conv 4 64" "grid:rows=1024,cols=1024 TransformerConv 8 128" "grid:rows=1024,cols=1024 TransformerConv 4 64"; do
    echo "##### build $b: $cfg"
    python3 .carry/diag/prof_fb.py $cfg 2>&1 | grep -E "^==|backward_|forward_kernel|Self CUDA time total"
  done
done
