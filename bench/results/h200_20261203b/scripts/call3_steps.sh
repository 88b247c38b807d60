set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch tessera_tests" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
export TESSERA_SHARED_DATA=$PWD/.carry/data LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu TESSERA_COMMIT=$C TESSERA_LIBRARY=$PWD/build-gpu/src/torch/libtessera_torch.so PYTHONPATH=$PWD/python
timeout 60 python3 .carry/exp/mem_probe.py > $R/mem_probe_$C.txt 2>&1; echo rc=$?; cat $R/mem_probe_$C.txt | head -70
timeout 100 python3 -m pytest -q tests/python > $R/pytest_$C.txt 2>&1; tail -n 3 $R/pytest_$C.txt
