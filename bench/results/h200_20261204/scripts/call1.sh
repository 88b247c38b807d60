# session 2026-12-04 call 1: the stream fix's first GPU run (TorchExecCuda, full attention bench without
# launch blocking), the weight gradient's full-wave slices (probe), GCN bench, gap probe, CUDA ctest.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/call1_steps.sh > $R/steps.txt 2>&1
tail -c 9000 $R/steps.txt
