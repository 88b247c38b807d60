# call 3 (2026-12-03): the projections as one node (_CudaLinears) with the attention's joint
# gradient buffer: GPU tests of the attention and linear families, full pytest, the attention
# layer bench on all five graphs against PyG, and Cora profiles of the fwd+bwd.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 520 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
