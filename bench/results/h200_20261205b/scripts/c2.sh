# session 2026-12-05 (fourth) call 2: C++ benches with the measured copy bandwidth; head groups A/B (f32 op level, f16 layer); small graphs' layer bench again; memcheck.
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
bash .carry/exp/c2_steps.sh > $R/steps.txt 2>&1
tail -c 4000 $R/steps.txt
