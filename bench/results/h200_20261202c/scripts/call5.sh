set -x
R=$OUT/r; mkdir -p $R
timeout 200 python3 .carry/exp/gather_probe.py > $R/gather_probe.txt 2>&1; cat $R/gather_probe.txt
