#!/usr/bin/env bash
# Writes the variant headers of spmm_ilp_ab.cu (call 1) and spmm_occ_ab.cu (call 2) into DIR, as
# they were carried in .carry/exp: copies of src/cuda/ops/spmm_kernels.cuh at 331ebd3, each in its
# own namespace. v_a: unchanged; v_p4/p6/p8: spmm_predicated_batches.patch (predicated last batch)
# with kIlp 4/6/8; v_b6/b8: v_a with csr_rows_kernel's __launch_bounds__(256, 6 / 8).
#   bash make_variants.sh DIR      (from the repository root)
set -euo pipefail
D=$1; S=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$D"
git show 331ebd3:src/cuda/ops/spmm_kernels.cuh > "$D/base.cuh"
ns() { sed "s/namespace tessera::ops::cuda::kernels {/namespace tessera::ops::cuda::kernels_$1 {/"; }
ns a < "$D/base.cuh" > "$D/v_a.cuh"
cp "$D/base.cuh" "$D/pred.cuh" && patch -s "$D/pred.cuh" "$S/spmm_predicated_batches.patch"
for k in 4 6 8; do ns p$k < "$D/pred.cuh" | sed "s/^constexpr int kIlp = 8;/constexpr int kIlp = $k;/" > "$D/v_p$k.cuh"; done
for b in 6 8; do
  sed -e "s/namespace tessera::ops::cuda::kernels_a {/namespace tessera::ops::cuda::kernels_b$b {/" \
      -e "s/__global__ void __launch_bounds__(256) csr_rows_kernel(/__global__ void __launch_bounds__(256, $b) csr_rows_kernel(/" \
      "$D/v_a.cuh" > "$D/v_b$b.cuh"
done
rm "$D/base.cuh" "$D/pred.cuh"
