set -x
R=$OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$(cat .carry/COMMIT) TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 120 python3 .carry/exp/overlap_probe.py --width 256 --chunks 2,4,8,16 --json $R/overlap_grid256.json > $R/overlap_grid256.txt 2>&1; cat $R/overlap_grid256.txt
timeout 90 python3 .carry/exp/overlap_probe.py --width 512 --chunks 4,8 --json $R/overlap_grid512.json > $R/overlap_grid512.txt 2>&1; cat $R/overlap_grid512.txt
for w in 64 256; do timeout 60 python3 bench/host_overhead.py --width $w --json $R/host_overhead_$w.json > $R/host_overhead_$w.txt 2>&1; head -12 $R/host_overhead_$w.txt; done
