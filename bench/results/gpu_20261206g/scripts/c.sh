# session 2026-12-06 (sixteenth) call C, what 241 s of device time could hold after the refused starts
# (call B never started). NOT RUN: the device tool refused it (too little time left to start a
# machine): tessera_tests Linear* prebuilt here (scripts/pack_prebuilt.sh build tessera_tests, at
# 36fd517, whose C++ is HEAD's): every CUDA projection variant with and without a kept weight split
# (bitwise), heads and a second input included, then memcheck on the heads case. No torch build fits.
source scripts/device_call.sh
cat $R/gpu.txt
tar xJf .carry2/bins.tar.xz -C /tmp; cat /tmp/bins/COMMIT
LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)") timeout 100 \
  /tmp/bins/tessera_tests --gtest_filter='Linear*' > $R/gtest_linear.txt 2>&1; echo gtest rc=$?
grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure|expected|kept split" $R/gtest_linear.txt | head -40
# memcheck on the heads + second input case (a kept split of W and W2), small shapes.
CS=$(command -v compute-sanitizer || find /usr/local -name compute-sanitizer -type f | head -1)
TESSERA_TEST_SMALL=1 LD_LIBRARY_PATH=/tmp/bins:$(dirname "$(find /usr/local -name libcudart.so.13 | head -1)") timeout 60 \
  $CS --tool memcheck --error-exitcode 9 /tmp/bins/tessera_tests --gtest_filter='LinearCuda.HeadsAndSecondInputMatchReference' \
  > $R/memcheck_heads.txt 2>&1; echo memcheck rc=$?
tail -n 4 $R/memcheck_heads.txt
