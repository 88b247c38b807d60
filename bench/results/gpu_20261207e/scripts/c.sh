# session 2026-12-07 (twenty-second): whichever card comes (kind nvidia-h200 without needs_h200 takes
# an H100 or an H200): call A's script on an H200 (the 12-row benchmark), call B's on an H100.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash bench/results/gpu_20261207e/scripts/a.sh
else
  bash bench/results/gpu_20261207e/scripts/b.sh
fi
