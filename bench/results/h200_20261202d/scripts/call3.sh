# call 3 (HEAD): the benchmarks' shared timer / (H, C) parser built against torch 2.11; both
# attention benchmarks run (the C++ layer benchmark a third time: run-to-run spread).
set -x
R=$OUT/r; mkdir -p $R
BUILD_TARGETS="attention_bench attention_layer_cpp_bench" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -3 $R/build.txt
export TESSERA_COMMIT=$(cat .carry/COMMIT) LD_LIBRARY_PATH=$PWD/.carry/root/usr/lib/x86_64-linux-gnu
timeout 60 build-gpu/bench/attention_layer_cpp_bench --json $R/attention_layer_cpp.json > $R/attention_layer_cpp.txt 2>&1; grep -v WARN $R/attention_layer_cpp.txt
timeout 60 build-gpu/bench/attention_bench --hc 4x64 --json $R/attention_bench.json > $R/attention_bench.txt 2>&1; cat $R/attention_bench.txt
cd $OUT && tar czf r.tgz r && rm -rf r
