# session 2026-12-06 (sixteenth) call B, at 36fd517 (prepared projections without autograd). NOT RUN:
# every start after call A was refused until the device time was spent. Kept as the next session's
# first call (refresh .carry/COMMIT and .carry2 first; it builds from the working tree, so commit
# first or carry a snapshot): the kept-split checks (tessera_tests Linear*, prebuilt here by
# scripts/pack_prebuilt.sh), pytest test_linear.py + test_attention.py (the prepared layers' launches
# and outputs, the block-gradient fix), the prepared path alternated with it off
# (TESSERA_LINEAR_PREPARED=0/1/0/1, tessera alone, Cora and PubMed; the grid's rows are GPU-bound and
# stable across machines, compared with call A), and the full layer bench against PyG with the
# prepared path on. Results under $OUT/r, one tarball (a call cut short by the device budget
# returns the files under $OUT/r as they are). The shared preamble is scripts/device_call.sh. Carry .carry/debs, .carry/googletest,
# .carry/data/cora, .carry/data/pubmed, .carry/COMMIT and .carry2/bins.tar.xz (64 MiB cap).
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
# tessera_tests prebuilt here at this commit (scripts/pack_prebuilt.sh build tessera_tests): run first,
# with no build, so the kept-split checks come back even if the call is cut short.
tar xJf .carry2/bins.tar.xz -C /tmp
LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)") timeout 120 \
  /tmp/bins/tessera_tests --gtest_filter='Linear*' > $R/gtest_linear_$C.txt 2>&1; echo gtest rc=$?
tail -n 3 $R/gtest_linear_$C.txt; cat /tmp/bins/COMMIT
device_build tessera_torch  # the working tree, which is this commit (no snapshot: the carry cap)
elapsed
timeout 200 python3 -m pytest -q tests/python/test_linear.py tests/python/test_attention.py > $R/pytest_$C.txt 2>&1; echo pytest rc=$?
tail -n 3 $R/pytest_$C.txt
elapsed
for rep in 1 2; do for p in 0 1; do
  TESSERA_LINEAR_PREPARED=$p timeout 30 python3 bench/attention_layer_bench.py --no-pyg --graphs cora,pubmed --data-dir $D --budget-s 25 --json $R/prep${p}_rep${rep}.json > $R/prep${p}_rep${rep}.txt 2>&1; echo prep$p rep$rep rc=$?
done; done
elapsed
timeout 45 python3 bench/attention_profile.py --graph cora --hc 4x64 --data-dir $D --forward-only --rows 8 --timeline > $R/timeline_tf_cora_4x64.txt 2>&1; echo timeline rc=$?
L=$(( 470 - ($(date +%s) - T0) ))
TESSERA_LINEAR_PREPARED=1 timeout $L python3 bench/attention_layer_bench.py --graphs cora,pubmed,grid,rmat,clustered --data-dir $D --budget-s $(( L - 40 )) --json $R/attention_layer_$C.json > $R/attention_layer_$C.txt 2>&1; echo layer rc=$?
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed|PASSED|FAILED"
tar xzf $OUT/r.tgz -O r/gpu.txt
for f in prep timeline attention_layer; do tar xzf $OUT/r.tgz --wildcards -O "r/$f*.txt" | grep -E "fwd|timeline|medians" | cut -c1-200; done
