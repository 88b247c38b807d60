# session 2026-12-05c call 3: the Python test suite on the GPU (PyG 2.8 installed) with the resident projection as the default.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp3/c3_steps.sh > $R/steps.txt 2>&1
tail -c 6000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
