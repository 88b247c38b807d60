# call 3 (2026-12-03c, trimmed to the device time left): the 64x64 heuristic and the no-grad path at 8c233f4:
# LinearCuda ctest, test_linear.py, the tile probe at the changed shapes.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
timeout 150 bash .carry/exp/call3_steps.sh > $R/log.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
