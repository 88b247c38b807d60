# session 2026-12-05c call 4: same-card A/B of the attention layers' forward (tessera alone, grid and
# PubMed), the library before the resident projection (b68cf43, from .carry/snap) against d69b3b0, twice each.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp3/c4_steps.sh > $R/steps.txt 2>&1
tail -c 8000 $R/steps.txt
cd $OUT && tar czf r.tgz r && rm -rf r
