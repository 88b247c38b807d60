#pragma once
// Register-fragment layouts of the warp-level MMA instructions the WSB kernels use, and the
// kernels' own address mappings, as plain functions compiled for host and device. The kernels
// call exactly these functions, and tests/conformance/spmm_wsb_test.cpp emulates a warp on the
// CPU with them (ldmatrix + mma + epilogue) against a plain matrix product, so a layout slip is
// caught without a GPU.
//
// Source: PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type" (.f16/.bf16) and
// "Matrix Fragments for mma.m16n8k8" (.tf32), and "ldmatrix" (.trans); lane = %laneid,
// groupID g = lane >> 2, threadID_in_group t = lane % 4.
#if defined(__CUDACC__)
#define TESSERA_MMA_HD __host__ __device__ __forceinline__
#else
#define TESSERA_MMA_HD inline
#endif

namespace tessera::cuda::mma {

struct RowCol {
  int row, col;
};

// m16n8k16 .f16/.bf16, A (16x16, row-major), element i of 8 (a0..a7; registers hold pairs
// (a0,a1), (a2,a3), (a4,a5), (a6,a7), lower index in the lower 16 bits):
//   row = g for a0,a1,a4,a5; g + 8 for a2,a3,a6,a7;  col = 2t + (i & 1) (+ 8 for i >= 4).
TESSERA_MMA_HD constexpr RowCol k16_a(int lane, int i) {
  return {(lane >> 2) + 8 * ((i >> 1) & 1), (lane & 3) * 2 + (i & 1) + 8 * (i >> 2)};
}
// m16n8k16 B (16x8, "col"), element i of 4 (b0..b3): row (k) = 2t + (i & 1) (+ 8 for i >= 2),
// col (n) = g.
TESSERA_MMA_HD constexpr RowCol k16_b(int lane, int i) {
  return {(lane & 3) * 2 + (i & 1) + 8 * (i >> 1), lane >> 2};
}
// Accumulator C/D (16x8 fp32) of m16n8k16 and m16n8k8, element i of 4:
//   row = g for c0,c1; g + 8 for c2,c3;  col = 2t + (i & 1).
TESSERA_MMA_HD constexpr RowCol acc_c(int lane, int i) {
  return {(lane >> 2) + 8 * (i >> 1), (lane & 3) * 2 + (i & 1)};
}
// m16n8k8 .tf32 A (16x8), element i of 4: row = g for a0,a2; g + 8 for a1,a3;
// col = t for a0,a1; t + 4 for a2,a3.
TESSERA_MMA_HD constexpr RowCol k8_tf32_a(int lane, int i) {
  return {(lane >> 2) + 8 * (i & 1), (lane & 3) + 4 * (i >> 1)};
}
// m16n8k8 .tf32 B (8x8), element i of 2: row (k) = t (+ 4 for b1), col (n) = g.
TESSERA_MMA_HD constexpr RowCol k8_tf32_b(int lane, int i) { return {(lane & 3) + 4 * i, lane >> 2}; }

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: lanes 8m..8m+7 give the addresses of rows
// 0..7 of matrix m; with .trans, lane receives in register m the elements
// (row 2t + j, column g) of matrix m, j = 0, 1 (j = 0 in the lower 16 bits).
TESSERA_MMA_HD constexpr RowCol ldsm_trans_elem(int lane, int j) { return {(lane & 3) * 2 + j, lane >> 2}; }

// ---- The WSB kernels' mappings -----------------------------------------------------------------
// fp16/bf16: the 16x16 A operand is [tile of block 2p | tile of block 2p+1] (k 0..7 | k 8..15).
// Register r (0..3) of a lane is one 32-bit load of two adjacent tile cells; this is the cell of
// the lower half: block (0/1 within the pair), tile row, slot. The upper half is slot + 1.
struct TileCell {
  int block, row, slot;
};
TESSERA_MMA_HD constexpr TileCell wsb_a_k16(int lane, int r) {
  return {r >> 1, (lane >> 2) + 8 * (r & 1), (lane & 3) * 2};
}
// ldmatrix.x4.trans row address of `lane` for the n-tile pair (2q, 2q+1) of the gathered tile
// sX[16 source rows][features]: matrix 0 = k 0..7 x n-tile 2q, matrix 1 = k 8..15 x n-tile 2q,
// matrix 2 = k 0..7 x n-tile 2q+1, matrix 3 = k 8..15 x n-tile 2q+1. Returns (sX row, feature
// offset within the pair's 16 features). Registers 0,1 are then B (b0b1, b2b3) of n-tile 2q,
// registers 2,3 B of n-tile 2q+1.
TESSERA_MMA_HD constexpr RowCol wsb_ldsm_addr(int lane) {
  return {(lane & 7) + 8 * ((lane >> 3) & 1), 8 * (lane >> 4)};
}
// tf32: one m16n8k8 per block; A element i = tile cell (row, slot) = k8_tf32_a(lane, i) and
// B element i = sX[8 * block + k8_tf32_b(lane, i).row][8 * ntile + k8_tf32_b(lane, i).col].

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 (no .trans): lane receives in register m the elements
// (row g, column 2t + j) of matrix m, j = 0, 1 (j = 0 in the lower 16 bits).
TESSERA_MMA_HD constexpr RowCol ldsm_elem(int lane, int j) { return {lane >> 2, (lane & 3) * 2 + j}; }

// ---- The graph kernel's fp32 sandwich stage on tf32 (kernels/octile_sandwich.cuh) -------------
// out(row, s) = sum_c x(row, c) W[s][c] over one 8x8 W tile, as mma.m16n8k8: A = 16 rows of x
// (two 8x8 row blocks of the product vector, block-major, row-major inside), B[k][n] = W[n][c(k)].
// k is only a summation index, so the stage maps it to the block column c(k) = 2 (k % 4) + k / 4:
// a lane's two A elements of one row (k = t and t + 4) are then adjacent, one 8-byte load.
TESSERA_MMA_HD constexpr int sandwich_col(int k) { return 2 * (k & 3) + (k >> 2); }
// A element i of a lane: (row 0..15 of the m16 tile, block column).
TESSERA_MMA_HD constexpr RowCol sandwich_a(int lane, int i) {
  return {k8_tf32_a(lane, i).row, sandwich_col(k8_tf32_a(lane, i).col)};
}
// B element i of a lane: (block column c, output column s), i.e. W[s][c].
TESSERA_MMA_HD constexpr RowCol sandwich_b(int lane, int i) {
  return {sandwich_col(k8_tf32_b(lane, i).row), k8_tf32_b(lane, i).col};
}
// Offset in a row block of the lane's 8-byte load: elements (sandwich_a i = h) and (i = h + 2) of
// the block's rows (h = 0: rows 0-7 of the m16 tile, h = 1: rows 8-15).
TESSERA_MMA_HD constexpr int sandwich_x_offset(int lane) { return (lane >> 2) * 8 + 2 * (lane & 3); }
// Offset of B element i in a W tile stored transposed (W[s][c] at c * 8 + s).
TESSERA_MMA_HD constexpr int sandwich_w_offset(int lane, int i) {
  return sandwich_b(lane, i).row * 8 + sandwich_b(lane, i).col;
}
// Offset of accumulator i in its output block (acc_c row >> 3 of the m16 tile), stored transposed
// like the stage's outputs (out(row, s) at s * 8 + row % 8).
TESSERA_MMA_HD constexpr int sandwich_out_offset(int lane, int i) {
  return acc_c(lane, i).col * 8 + (acc_c(lane, i).row & 7);
}

// ---- The WSB attention kernel's mappings (attention_wsb_kernels.cuh) ----------------------------
// S = Q K^T per block pair: A = the window's 16 query rows x 16 channels of one k-step, B = K^T
// (k = channel, n = source slot), D = two 16x8 accumulators (n-tile j = block 2p+j of the pair).
// Q register r (0..3) of a lane is one 32-bit load of two adjacent channels; this is the element
// (window row, channel within the k-step) of the lower half: the A element 2r of k16_a.
TESSERA_MMA_HD constexpr RowCol attn_q_a(int lane, int r) { return k16_a(lane, 2 * r); }
// ldmatrix.x4 (no .trans) row address of `lane` for the K tile sK[16 source slots][channels] at a
// k-step: matrix 0 = slots 0..7 x channels 0..7, 1 = slots 0..7 x 8..15, 2 = slots 8..15 x 0..7,
// 3 = slots 8..15 x 8..15. Returns (sK row, channel offset within the k-step). Registers 0,1
// are then B (b0b1, b2b3) of n-tile 0, registers 2,3 B of n-tile 1.
TESSERA_MMA_HD constexpr RowCol attn_ldsm_k_addr(int lane) {
  return {(lane & 7) + 8 * (lane >> 4), 8 * ((lane >> 3) & 1)};
}
// O += P V: the A operand P (16 rows x 16 slots) is the S accumulators, rescaled and rounded in
// place: A register r holds accumulator elements (2i, 2i+1) of n-tile j, {j, i} returned here.
struct AccPair {
  int ntile, half;  // elements (2 * half, 2 * half + 1) of accumulator n-tile `ntile`
};
TESSERA_MMA_HD constexpr AccPair attn_p_from_s(int r) { return {r >> 1, r & 1}; }
// The B operand V (k = source slot, n = channel) is sV[16 slots][channels], loaded with
// ldmatrix.x4.trans at wsb_ldsm_addr, as the SpMM kernel loads its gathered feature tile.

}  // namespace tessera::cuda::mma
