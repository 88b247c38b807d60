// CPU-side tests of the predicates that decide whether the CUDA SpMM/SDDMM kernels may use
// 16-byte vector accesses and whether cuSPARSE gets the caller's matrices or aligned copies
// (src/ops/spmm/alignment.hpp). A wrong "true" is a misaligned-address fault on the GPU, so
// the predicate is checked against brute force: every row start of the matrix must be aligned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "ops/spmm/alignment.hpp"

using namespace tessera;
using namespace tessera::ops;

namespace {

// Brute force: every row start (and every vector-multiple column in it) is 16-byte aligned.
bool all_rows_aligned(uintptr_t base, int64_t rows, int64_t ld, size_t es, size_t vec) {
  if (vec % es) return false;
  const int64_t v = int64_t(vec / es);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < ld; c += v)
      if ((base + uintptr_t((r * ld + c) * int64_t(es))) % vec != 0) return false;
  return true;
}

DenseView view_at(uintptr_t addr, DType t, int64_t rows, int64_t cols, int64_t ld) {
  return {reinterpret_cast<void*>(addr), t, rows, cols, ld, Device{}};
}

}  // namespace

TEST(SpmmAlignment, RowsVectorAlignedMatchesBruteForce) {
  const uintptr_t base = 0x10000;  // 16-byte (and 256-byte) aligned, never dereferenced
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const size_t es = dtype_size(t);
    for (int64_t off_elems = 0; off_elems < 9; ++off_elems)
      for (int64_t ld = 1; ld <= 40; ++ld) {
        const uintptr_t p = base + uintptr_t(off_elems) * es;
        const bool want = all_rows_aligned(p, 3, ld, es, 16);
        EXPECT_EQ(rows_vector_aligned(reinterpret_cast<const void*>(p), ld, es, 16), want)
            << dtype_name(t) << " offset " << off_elems << " elements, ld " << ld;
        EXPECT_EQ(rows_vector_aligned(view_at(p, t, 3, ld, ld), 16), want);
      }
  }
}

TEST(SpmmAlignment, TypicalCasesOfTheFailedGpuRun) {
  const uintptr_t a = 0x20000;
  // Contiguous float rows of width 1, 3, 5, 17: rows 2 on are misaligned -> no vector path.
  for (int64_t F : {1, 3, 5, 17, 33, 130}) EXPECT_FALSE(rows_vector_aligned(view_at(a, DType::f32, 4, F, F))) << F;
  for (int64_t F : {4, 64, 128}) EXPECT_TRUE(rows_vector_aligned(view_at(a, DType::f32, 4, F, F))) << F;
  // Strided: width 64 but ld 67 (a padded view) -> misaligned rows.
  EXPECT_FALSE(rows_vector_aligned(view_at(a, DType::f32, 4, 64, 67)));
  // Column slice starting at element 1 of an aligned buffer.
  EXPECT_FALSE(rows_vector_aligned(view_at(a + 4, DType::f32, 4, 64, 64)));
  // Offset by a whole vector is fine.
  EXPECT_TRUE(rows_vector_aligned(view_at(a + 16, DType::f32, 4, 64, 64)));
  // double: 2 per vector; half/bf16: 8 per vector.
  EXPECT_TRUE(rows_vector_aligned(view_at(a, DType::f64, 4, 2, 2)));
  EXPECT_FALSE(rows_vector_aligned(view_at(a, DType::f64, 4, 3, 3)));
  EXPECT_FALSE(rows_vector_aligned(view_at(a, DType::f16, 4, 12, 12)));
  EXPECT_TRUE(rows_vector_aligned(view_at(a, DType::bf16, 4, 16, 16)));
  EXPECT_FALSE(rows_vector_aligned(view_at(a + 8, DType::bf16, 4, 16, 16)));
  // Element sizes that do not divide the vector have no vector path at all.
  EXPECT_FALSE(rows_vector_aligned(reinterpret_cast<const void*>(a), 12, 3, 16));
}

TEST(SpmmAlignment, VectorPathNeedsBothOperandsAndWholeVectors) {
  const uintptr_t a = 0x30000, b = 0x40000;
  EXPECT_TRUE(vector_path_eligible(view_at(a, DType::f32, 5, 8, 8), view_at(b, DType::f32, 7, 8, 8)));
  // Width not a whole number of vectors, even with aligned rows (ld 8 > F 6).
  EXPECT_FALSE(vector_path_eligible(view_at(a, DType::f32, 5, 6, 8), view_at(b, DType::f32, 7, 6, 8)));
  // Either operand misaligned (base or ld) disqualifies.
  EXPECT_FALSE(vector_path_eligible(view_at(a + 4, DType::f32, 5, 8, 8), view_at(b, DType::f32, 7, 8, 8)));
  EXPECT_FALSE(vector_path_eligible(view_at(a, DType::f32, 5, 8, 8), view_at(b + 4, DType::f32, 7, 8, 8)));
  EXPECT_FALSE(vector_path_eligible(view_at(a, DType::f32, 5, 8, 8), view_at(b, DType::f32, 7, 8, 10)));
  EXPECT_FALSE(vector_path_eligible(view_at(a, DType::f32, 5, 8, 12), view_at(b, DType::f32, 7, 8, 9)));
  // Mixed element sizes never vectorize together.
  EXPECT_FALSE(vector_path_eligible(view_at(a, DType::f32, 5, 8, 8), view_at(b, DType::f64, 7, 8, 8)));
  EXPECT_TRUE(vector_path_eligible(view_at(a, DType::f16, 5, 24, 32), view_at(b, DType::f16, 7, 24, 24)));
}

TEST(SpmmAlignment, AlignedLdIsTheSmallestAlignedLeadingDimension) {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const size_t es = dtype_size(t);
    for (int64_t cols = 0; cols <= 40; ++cols) {
      const int64_t ld = aligned_ld(cols, es);
      EXPECT_GE(ld, std::max<int64_t>(cols, 1));
      EXPECT_TRUE(rows_vector_aligned(reinterpret_cast<const void*>(uintptr_t(0x50000)), ld, es)) << cols;
      EXPECT_LT(ld - std::max<int64_t>(cols, 1), int64_t(16 / es)) << "not the smallest: " << cols;
    }
  }
}
