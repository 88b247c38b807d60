# session 2026-12-03g call 5 (last device seconds): the stream fix, R-MAT 4x64 training rows without launch blocking.
export PYTHONUNBUFFERED=1
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $OUT/build.txt 2>&1; tail -n 2 $OUT/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 70 python3 bench/attention_layer_bench.py --graphs rmat --hc 4x64 --no-pyg --data-dir .carry/data --budget-s 40 --json $OUT/attention_rmat_nopyg_$C.json > $OUT/attention_rmat_nopyg_$C.txt 2>&1; echo rc=$?; grep -v "^wrote" $OUT/attention_rmat_nopyg_$C.txt | grep -v "^    \|^  File" | tail -n 12
