set -x
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/smi.txt
nvcc -O2 -arch=sm_90 -std=c++17 .carry/exp/gemm_probe.cu -lcublasLt -lcublas -o /tmp/gemm_probe 2>&1 | tail -3
timeout 200 /tmp/gemm_probe > $R/gemm_probe.txt 2>&1; grep -E "cublasSgemm|best" $R/gemm_probe.txt
timeout 120 python3 .carry/exp/torch_linear_probe.py > $R/torch_linear_probe.txt 2>&1; cat $R/torch_linear_probe.txt | grep -v Warn
