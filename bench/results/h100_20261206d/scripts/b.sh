# session 2026-12-06 (thirteenth) call B: the SpMM's limits on this card (spmm_limits_bench); every
# CUDA test (ctest -R Cuda) at the commit with one LRU template for the three per-graph caches;
# the grid 4x64 attention forward's DRAM bytes (ncu) and its time per light grab size.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
(
set -x
ROOT=$PWD; C=$(cat .carry/COMMIT); T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $R/gpu.txt; cat $R/gpu.txt
cd .carry/snap; export TESSERA_CARRY=$ROOT/.carry
BUILD_TARGETS="tessera_torch tessera_tests spmm_limits_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
echo elapsed $(( $(date +%s) - T0 ))
D=$ROOT/.carry/data
timeout 120 build-gpu/bench/spmm_limits_bench --data-dir $D --json $R/spmm_limits_$C.json > $R/spmm_limits_$C.txt 2>&1; echo limits rc=$?
timeout 60 build-gpu/bench/spmm_limits_bench --data-dir $D --graphs cora,pubmed,clustered > $R/spmm_limits_again_$C.txt 2>&1; echo limits2 rc=$?
echo elapsed $(( $(date +%s) - T0 ))
timeout 300 ctest --test-dir build-gpu -R Cuda -j 4 --output-on-failure --timeout 200 > $R/ctest_cuda_$C.txt 2>&1; echo ctest rc=$?
tail -n 5 $R/ctest_cuda_$C.txt
echo elapsed $(( $(date +%s) - T0 ))
for g in 1 2 4 8 16 32; do
  TESSERA_ATTENTION_GRAB=$g timeout 40 python3 bench/attention_profile.py --graph grid --hc 4x64 --data-dir $D --forward-only --rows 4 > $R/grab_${g}.txt 2>&1; echo grab $g rc=$?
done
timeout 40 python3 bench/attention_profile.py --graph grid --hc 4x64 --data-dir $D --forward-only --rows 4 > $R/grab_default.txt 2>&1
echo elapsed $(( $(date +%s) - T0 ))
timeout 90 ncu --clock-control none -k regex:forward_kernel --launch-skip 6 --launch-count 1 --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active python3 bench/attention_profile.py --graph grid --hc 4x64 --data-dir $D --forward-only > $R/ncu_bytes_grid_4x64.txt 2>&1; echo ncu rc=$?
timeout 90 ncu --clock-control none -k regex:forward_kernel --launch-skip 6 --launch-count 1 --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum python3 bench/attention_profile.py --graph grid --hc 4x64 --layer gatv2 --data-dir $D --forward-only > $R/ncu_bytes_gatv2_grid_4x64.txt 2>&1; echo ncu2 rc=$?
echo elapsed $(( $(date +%s) - T0 ))
) > $R/steps.txt 2>&1
tar czf $OUT/r.tgz -C /tmp r
grep -E "rc=|elapsed" $R/steps.txt | tail -20; cat $R/spmm_limits_*.txt | grep -v "^wrote"; tail -n 4 $R/ctest_cuda_*.txt
for g in 1 2 4 8 16 32 default; do echo "grab $g: $(grep -E '^==' $R/grab_$g.txt | grep -o 'forward [0-9.]* ms')"; done
grep -E "dram__|lts__|gpu__time|l1tex|warps_active" $R/ncu_bytes_*.txt
