# session 2026-12-05 (fifth) call 3: why the layer bench's small-graph forward is slower than prof_small's timing of the same call.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(
set -x
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv
[ -f build-gpu/src/torch/libtessera_torch.so ] || BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 150 python3 .carry/exp/order_probe.py cora,pubmed 4x64,8x128,2x256 gatv2 2>&1 | grep -v Warn
timeout 60 python3 .carry/exp/prof_small.py cora 4x64,2x256 none tessera,pyg 2>&1 | grep events
timeout 100 python3 bench/attention_layer_bench.py --layers gatv2 --graphs cora,pubmed --data-dir .carry/data --budget-s 80 --json $R/layer_small_$C.json 2>&1 | grep -v "^wrote" | cut -c1-240
timeout 60 python3 bench/attention_layer_bench.py --no-pyg --layers gatv2 --graphs cora --data-dir .carry/data --budget-s 40 --json $R/layer_small_nopyg_$C.json 2>&1 | grep -v "^wrote" | cut -c1-240
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv
) > $R/steps.txt 2>&1
tail -c 6000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
