# session 2026-12-06 (tenth) call 3: cuda.multi_query with chunked column indices and two rows in
# flight, preferred at 4-8 heads per item; the final commit's GPU tests and benchmarks.
export PYTHONUNBUFFERED=1
R=/tmp/r; mkdir -p $R
bash .carry/exp6/d3_steps.sh > $R/steps.txt 2>&1
tail -c 11000 $R/steps.txt
