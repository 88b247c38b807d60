set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 25 ctest --test-dir build-gpu -R LinearCuda --timeout 20 > $R/ctest_linear_$C.txt 2>&1; echo rc=$?; tail -n 4 $R/ctest_linear_$C.txt
timeout 25 python3 -m pytest -q tests/python/test_linear.py > $R/pytest_linear_$C.txt 2>&1; tail -n 3 $R/pytest_linear_$C.txt
TILE_SHAPES=small timeout 20 python3 .carry/exp/tile_probe.py > $R/tile_probe_$C.txt 2>&1; cat $R/tile_probe_$C.txt
