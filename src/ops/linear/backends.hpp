#pragma once
// Entry points of the linear backends (reference/, cuda/). Arguments arrive validated by
// src/ops/linear/linear.cpp.
#include "tessera/ops/linear.hpp"

namespace tessera::ops::detail {

void linear_reference(const LinearArgs& a);

// The CUDA tf32x3 kernel with a BM x BN CTA tile (128x128, 128x64 or 64x64).
struct LinearTile {
  int bm = 128, bn = 128;
};
bool linear_tf32x3_eligible(const LinearArgs& a);
// The tf32x3 kernels' rules on X, W, Y, the bias and R (16-byte chunks of X and W along K, float2
// stores of Y), whatever the heads and second input; the wgmma kernels share them.
bool linear_operands_fit(const LinearArgs& a);
void linear_tf32x3_cuda(const LinearArgs& a, const Exec& exec, LinearTile tile);
// The tile the heuristic picks on device `device_index` (reads its multiprocessor count).
LinearTile linear_tf32x3_default_tile(const LinearArgs& a, int device_index);

// The same three products on Hopper's wgmma (cuda/sm90a/linear_wgmma.cu; built when
// TESSERA_WITH_WGMMA), tiles of 64 x `warpgroups` rows by 128 columns (1 or 2): the tf32x3
// kernel's operand rules on a compute capability 9.0 device; the only variant for heads and a
// second input (LinearArgs::blocks, X2). preferred: the warpgroups of the tile the heuristic takes
// over the tf32x3 tiles, or 0 where those are faster.
bool linear_wgmma_eligible(const LinearArgs& a);
int linear_wgmma_preferred(const LinearArgs& a, int device_index);
void linear_wgmma_cuda(const LinearArgs& a, const Exec& exec, int warpgroups);
// The same products for K <= 128 with W's n-tile resident in shared memory: persistent CTAs of two
// warpgroups, each streaming 64-row tiles of X (cuda/sm90a/linear_wgmma_resident.cu). preferred:
// whether the heuristic takes it over the streaming tiles.
bool linear_wgmma_resident_eligible(const LinearArgs& a);
bool linear_wgmma_resident_preferred(const LinearArgs& a, int device_index);
void linear_wgmma_resident_cuda(const LinearArgs& a, const Exec& exec);
// W's (and W2's) split as both wgmma variants read it (LinearArgs::w_split): its bytes on W's
// device (0 where those variants cannot run), and the split written into `out`.
size_t linear_wgmma_split_bytes(const DenseView& W, const DenseView& W2);
void linear_wgmma_split_weight(const DenseView& W, const DenseView& W2, void* out, const Exec& exec);

void linear_weight_grad_reference(const LinearGradArgs& a);
// dW = dY^T X (+ db) on Hopper's wgmma (cuda/sm90a/linear_weight_grad.cu; built when
// TESSERA_WITH_WGMMA).
bool linear_weight_grad_wgmma_eligible(const LinearGradArgs& a);
void linear_weight_grad_wgmma_cuda(const LinearGradArgs& a, const Exec& exec);

}  // namespace tessera::ops::detail
