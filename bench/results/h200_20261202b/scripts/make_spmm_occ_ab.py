#!/usr/bin/env python3
"""Writes spmm_occ_ab.cu, the harness call2.sh compiled: spmm_ilp_ab.cu with its variant list
swapped for the launch-bound variants (kernels_a, kernels_b6, kernels_b8). Run here before call 2:
    python3 make_spmm_occ_ab.py > spmm_occ_ab.cu"""
import os
import sys

s = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "spmm_ilp_ab.cu")).read()
edits = [
    ("""// Experiment (session 2026-12-02 b): the CSR row kernel's gather batching, variants side by side in
// one binary. call1.sh generates one copy of src/cuda/ops/spmm_kernels.cuh per variant, each in
// its own namespace (kernels_a: the committed kernel, kIlp 4 and a one-by-one remainder;
// kernels_p4 / p6 / p8: the predicated last batch with kIlp 4 / 6 / 8), and compiles this file
// against them.""",
     """// Experiment (session 2026-12-02 b, call 2): the CSR row kernel's occupancy, variants side by side in
// one binary (the harness of spmm_ilp_ab.cu). call2.sh generates copies of the committed
// src/cuda/ops/spmm_kernels.cuh, each in its own namespace, differing only in csr_rows_kernel's
// __launch_bounds__: kernels_a (256: 48 registers, 5 blocks = 40 warps per SM), kernels_b6
// (256, 6: 48 warps), kernels_b8 (256, 8: 64 warps, 32 registers)."""),
    ('#include "v_p4.cuh"\n#include "v_p6.cuh"\n#include "v_p8.cuh"', '#include "v_b6.cuh"\n#include "v_b8.cuh"'),
    ('const char* names[4] = {"a (kIlp 4, serial rest)", "p4 (kIlp 4, predicated)", "p6 (kIlp 6, predicated)", '
     '"p8 (kIlp 8, predicated)"};',
     'const char* names[3] = {"a (committed, 5 blocks)", "b6 (bound 6 blocks)", "b8 (bound 8 blocks)"};'),
    ("float* Ys[4];", "float* Ys[3];"),
    ("std::vector<float> ms[4];", "std::vector<float> ms[3];"),
    ("for (int v = 0; v < 4; ++v)", "for (int v = 0; v < 3; ++v)"),
    ("""    ms[1].push_back(time_ms(tc::kernels_p4::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_p4, Ys[1]), n, 20));
    ms[2].push_back(time_ms(tc::kernels_p6::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_p6, Ys[2]), n, 20));
    ms[3].push_back(time_ms(tc::kernels_p8::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_p8, Ys[3]), n, 20));""",
     """    ms[1].push_back(time_ms(tc::kernels_b6::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_b6, Ys[1]), n, 20));
    ms[2].push_back(time_ms(tc::kernels_b8::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_b8, Ys[2]), n, 20));"""),
]
for old, new in edits:
    if old not in s:
        sys.exit(f"make_spmm_occ_ab: spmm_ilp_ab.cu lacks {old[:50]!r}")
    s = s.replace(old, new)
sys.stdout.write(s)
