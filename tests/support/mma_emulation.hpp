#pragma once
// One warp's mma.m16n8k16 on the CPU, assembled from per-lane registers by the PTX fragment tables
// of cuda/ops/mma_fragments.hpp, for tests that fill the registers as a kernel does and compare
// the warp's result with the plain product. Each operand builder reports whether the 32 lanes
// cover every element of its tile exactly once (a mapping bug shows up there first).
#include <cstdint>
#include <cstring>

#include "cuda/ops/mma_fragments.hpp"

namespace tessera::testing::mma_emulation {

namespace mma = tessera::cuda::mma;

// The R x C matrix whose element held by lane l as its i-th of N is at where(l, i); true when
// the lanes cover every element exactly once.
template <int R, int C, int N, class Where>
bool gather_operand(const double (&reg)[32][N], double (&M)[R][C], Where where) {
  int hits[R][C] = {};
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < N; ++i) {
      const mma::RowCol rc = where(l, i);
      M[rc.row][rc.col] = reg[l][i];
      ++hits[rc.row][rc.col];
    }
  for (auto& r : hits)
    for (int h : r)
      if (h != 1) return false;
  return true;
}

// A (16 x 16) from each lane's 8 A elements (k16_a).
inline bool a_operand(const double (&areg)[32][8], double (&A)[16][16]) {
  return gather_operand(areg, A, [](int l, int i) { return mma::k16_a(l, i); });
}

// B (16 x 8) from each lane's 4 B elements (k16_b).
inline bool b_operand(const double (&breg)[32][4], double (&B)[16][8]) {
  return gather_operand(breg, B, [](int l, int i) { return mma::k16_b(l, i); });
}

// Each lane's 4 accumulators (acc_c) += the elements of A B they hold.
inline void accumulate(const double (&A)[16][16], const double (&B)[16][8], double (&creg)[32][4]) {
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      const mma::RowCol rc = mma::acc_c(l, i);
      for (int k = 0; k < 16; ++k) creg[l][i] += A[rc.row][k] * B[k][rc.col];
    }
}

// cvt.rna.tf32.f32 for finite x: round to 10 mantissa bits, to nearest, ties away from zero
// (adding half an ulp to the magnitude bits carries into the kept ones exactly then).
inline double tf32_rna(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u = (u + 0x1000u) & 0xffffe000u;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

// What the mma takes of an fp32 register given as a tf32 operand: its top 19 bits (truncation).
inline double tf32_rz(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= 0xffffe000u;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

}  // namespace tessera::testing::mma_emulation
