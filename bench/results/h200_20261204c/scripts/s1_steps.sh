set -x
R=$OUT/r
C=$(cat .carry/COMMIT)
BUILD_TARGETS="tessera_torch" bash scripts/gpu_session.sh build > $R/build.txt 2>&1; tail -n 3 $R/build.txt
eval "$(bash scripts/gpu_session.sh env)"
timeout 240 python3 .carry/exp/prof_small.py cora,pubmed 4x64,8x128,2x256 cora:gatv2:4x64,cora:transformer:4x64,pubmed:gatv2:8x128,pubmed:transformer:8x128 > $R/prof_small_$C.txt 2>&1; echo rc=$?
timeout 150 python3 .carry/exp/prof_small.py grid,rmat 4x64,8x128 grid:gatv2:4x64:tessera,grid:transformer:8x128:tessera,rmat:gatv2:4x64:tessera tessera > $R/prof_large_$C.txt 2>&1; echo rc=$?
