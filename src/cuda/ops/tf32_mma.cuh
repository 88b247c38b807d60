#pragma once
// The tf32 tensor-core pieces shared by the WSB SpMM (tf32 variant), the graph kernel's fp32
// sandwich stage and the fp32 linear: one mma.m16n8k8 and the hi/lo split of an fp32 operand for
// the three-product (tf32x3) scheme.
#include <cstdint>

namespace tessera::cuda {

// c += a b: m16n8k8, A row-major (a0..a3), B "col" (b0, b1), fp32 accumulators (layouts in
// mma_fragments.hpp).
__device__ __forceinline__ void mma_k8_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// x = hi + lo for the mma's tf32 operands: hi = x rounded to nearest (ties away: what
// cvt.rna.tf32.f32 gives for finite values, without its inf/NaN guard, FSETP + SEL per conversion;
// the operands are finite), lo = x - hi exactly in fp32, handed over as it is: the mma reads a tf32
// operand's top 19 bits (ptxas itself leaves a cvt result that only feeds an mma unmasked), so lo
// is truncated there, |x - hi - lo'| <= 2^-10 |lo| <= 2^-21 |x|, of either sign as lo is.
// Three instructions (add, mask, subtract).
__device__ __forceinline__ void split_tf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

}  // namespace tessera::cuda
