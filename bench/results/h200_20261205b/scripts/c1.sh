# session 2026-12-05 (fourth) call 1: 3 blocks per SM for the f32 8-channel forward; TransformerConv sparse return vs PyG; layer bench.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/c1_steps.sh > $R/steps.txt 2>&1
tail -c 3500 $R/steps.txt
