set -x
R=$OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
cd .carry/exp
nvcc -O3 -std=c++20 -gencode=arch=compute_90,code=sm_90 -I../../src -Xptxas -v linear_probe.cu -lcublas -o /tmp/lp > $R/ptxas.txt 2>&1; echo build rc=$?
/tmp/lp > $R/probe.txt 2>&1; echo rc=$?; cat $R/probe.txt
timeout 90 compute-sanitizer --tool memcheck /tmp/lp check > $R/memcheck.txt 2>&1; tail -n 3 $R/memcheck.txt
timeout 120 compute-sanitizer --tool racecheck /tmp/lp check > $R/racecheck.txt 2>&1; tail -n 3 $R/racecheck.txt
