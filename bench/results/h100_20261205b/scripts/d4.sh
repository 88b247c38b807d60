# session 2026-12-05 (fifth) call 4: tessera's Cora forward after PyG's measure, first call before / after PyG's.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(
set -x
[ -f build-gpu/src/torch/libtessera_torch.so ] || BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
for m in B C B C; do timeout 60 python3 .carry/exp/order_probe2.py $m 2>&1 | grep -v Warn; done
OMP_NUM_THREADS=1 timeout 60 python3 .carry/exp/order_probe2.py B 2>&1 | grep -v Warn | grep -E "mode|events|threads"
) > $R/steps.txt 2>&1
tail -c 9000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
