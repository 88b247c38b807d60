# session 2026-12-07 (nineteenth) call D: after call C (the fold at C < K lost; rule reverted), whether
# the host path of the layer's forward, or of one of its ops, waits for the GPU (bench/blocking_probe.py:
# each call's wall time with the GPU idle and with a 2 ms GPU sleep queued first), on PubMed and Cora;
# then the same probe under nsys for the CUDA API calls' time, where nsys is installed. Carry as call C.
source scripts/device_call.sh
(
set -x
cat $R/gpu.txt
device_build "tessera_torch"
elapsed
for gr in pubmed cora; do
  timeout 90 python3 bench/blocking_probe.py --graph $gr --data-dir $D > $R/blocking_probe_$gr.txt 2>&1; echo probe $gr rc=$?
done
elapsed
if command -v nsys > /dev/null; then
  timeout 150 nsys profile -t cuda,osrt -o $R/blocking_pubmed -f true python3 bench/blocking_probe.py --graph pubmed --data-dir $D > $R/nsys_run.txt 2>&1; echo nsys rc=$?
  timeout 90 nsys stats -r cuda_api_sum,osrt_sum $R/blocking_pubmed.nsys-rep > $R/nsys_api_sum.txt 2>&1; echo nsys stats rc=$?
  rm -f $R/blocking_pubmed.sqlite $R/blocking_pubmed.nsys-rep  # the summary is what comes back
fi
elapsed
) > $R/steps.txt 2>&1
device_pack
tar xzf $OUT/r.tgz -O r/steps.txt | grep -E "rc=|elapsed"
for gr in pubmed cora; do tar xzf $OUT/r.tgz -O r/blocking_probe_$gr.txt 2>/dev/null; done
tar xzf $OUT/r.tgz -O r/nsys_api_sum.txt 2>/dev/null | head -60
