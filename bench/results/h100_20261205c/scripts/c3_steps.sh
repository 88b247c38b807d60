set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
nvidia-smi --query-gpu=name --format=csv
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 300 python3 -m pytest -q -x tests/python > $R/pytest_$C.txt 2>&1; echo pytest rc=$?; tail -n 15 $R/pytest_$C.txt
