# Call C (warm, call A's H100): the whole Python suite on the GPU after this session's layer changes
# (input checks on every call, the autocast routing of the projections).
source scripts/device_call.sh
(
set -x
device_build "tessera_torch"
elapsed
timeout 240 python3 -m pytest -q tests/python > $R/pytest_all_$C.txt 2>&1; echo "pytest rc=$?"
tail -n 3 $R/pytest_all_$C.txt
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed|passed|failed"
