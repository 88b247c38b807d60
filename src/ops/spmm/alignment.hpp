#pragma once
// Alignment predicates of the vectorized paths (host code; shared by the SpMM/SDDMM and attention
// CUDA launchers, the cuSPARSE staging and the CPU-side unit test).
//
// A kernel that loads V = vec_bytes / sizeof(T) consecutive elements of row r at column c reads
// address base + (r * ld + c) * sizeof(T). That address is a multiple of vec_bytes for every r
// and every c that is a multiple of V exactly when
//   base % vec_bytes == 0   and   ld % V == 0   (i.e. ld * sizeof(T) % vec_bytes == 0).
// A strided view (ld != F) or a view that starts at a row/column offset inside a larger buffer
// can break either condition, so both are checked on the actual pointer at run time.
#include <cstddef>
#include <cstdint>

#include "tessera/core/dense.hpp"

namespace tessera::ops {

// True when every row of the (base, ld) matrix starts on a vec_bytes boundary (see above).
// False for element sizes that do not divide vec_bytes (no whole vector of them exists).
inline bool rows_vector_aligned(const void* base, int64_t ld, size_t elem_bytes, size_t vec_bytes = 16) {
  if (elem_bytes == 0 || vec_bytes % elem_bytes != 0) return false;
  const int64_t v = int64_t(vec_bytes / elem_bytes);
  return reinterpret_cast<uintptr_t>(base) % vec_bytes == 0 && ld % v == 0;
}
inline bool rows_vector_aligned(const DenseView& m, size_t vec_bytes = 16) {
  return rows_vector_aligned(m.data, m.ld, dtype_size(m.dtype), vec_bytes);
}

// The 16-byte vector path of the custom CSR kernels (warp_row, sddmm) is taken when both dense
// operands have aligned rows and the width is a whole number of vectors (the kernels guard
// vectors, not elements, against the width).
inline bool vector_path_eligible(const DenseView& a, const DenseView& b, size_t vec_bytes = 16) {
  const size_t es = dtype_size(a.dtype);
  if (es == 0 || vec_bytes % es != 0 || dtype_size(b.dtype) != es) return false;
  const int64_t v = int64_t(vec_bytes / es);
  return a.cols % v == 0 && rows_vector_aligned(a, vec_bytes) && rows_vector_aligned(b, vec_bytes);
}

// Smallest leading dimension >= cols (and >= 1) whose rows are vec_bytes-aligned.
inline int64_t aligned_ld(int64_t cols, size_t elem_bytes, size_t vec_bytes = 16) {
  const int64_t v = elem_bytes && vec_bytes % elem_bytes == 0 ? int64_t(vec_bytes / elem_bytes) : 1;
  const int64_t c = cols < 1 ? 1 : cols;
  return (c + v - 1) / v * v;
}

}  // namespace tessera::ops
