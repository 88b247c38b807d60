#pragma once
// Linear family: the layers' dense projection Y = X W^T (+ b) (+ R), as torch.nn.Linear computes it,
// optionally with a residual added in the same pass.
//
// Semantics
//   Y[i, j] = (sum_k X[i, k] W[j, k] (+ bias[j])) (+ R[i, j]); Y is overwritten. X: M x K,
//   W: N x K, Y: M x N, bias: N values of Y's dtype or nullptr, R: M x N or absent (data null);
//   R may be Y itself (same data and ld: Y += X W^T + b) but must not otherwise overlap Y. The
//   residual is added last, in Y's type, as `linear(x) + r` rounds: a layer's skip projection
//   (TransformerConv's lin_skip) then writes its sum with the attention output in one pass instead
//   of a projection and an add. Rows may be strided (ld >= cols). Same dtype and device for all.
//   K = 0 gives Y = bias (or 0) (+ R).
//   Heads (blocks > 1): a block-diagonal product. X is M x (blocks K) and W's N rows are `blocks`
//   blocks of N / blocks: output column j reads X's column block j / (N / blocks) only. The folded
//   TransformerConv projects each head's K-wide aggregate with that head's rows of lin_value.
//   Second input (X2 given): X2 (M x K2) with W2 (N x K2, same dtype and device) is added to every
//   output column, inside the same accumulation:
//     Y[i, j] = sum_k X[i, b(j) K + k] W[j, k] + sum_k X2[i, k] W2[j, k] (+ bias[j]) (+ R[i, j]).
//   The folded TransformerConv's skip projection (lin_skip(x_dst)) then costs no pass over Y of its
//   own. Neither with w_transposed.
//   w_transposed: W is given as K x N instead (W[k, j] = the N x K weight's [j, k]), so Y = X W: a
//   Linear's input gradient dX = dY W reads the [out, in] weight as it is stored, where it would
//   otherwise be transposed into a contiguous copy first (an allocation and a copy launch per
//   projection per backward, on the host path of every small-graph training step).
//
// Backends and variants (linear_registry()):
//   reference     plain loops, double accumulation, every floating dtype (the oracle).
//   cuda.tf32x3.BMxBN  fp32 on the tensor cores: each operand split into two tf32 parts, three
//                 products a_lo b_hi + a_hi b_lo + a_hi b_hi in fp32 accumulators (the a_lo b_lo
//                 term, <= 2^-22 relative, dropped). Error of an output measured against
//                 sum_k |X[i,k] W[j,k]| on the H200: 2^-20 .. 2^-21 for K <= 260, 2^-19 at K = 1024
//                 (cuBLAS fp32 SGEMM: 2^-22 .. 2^-23; one tf32 pass: 2^-12). Tests bound it by
//                 (2^-19 + K 2^-24). Needs K % 4 == 0, N even, 16-byte aligned X and W with row strides
//                 multiple of 4, 8-byte aligned Y and R with even row strides; with w_transposed
//                 N % 4 == 0 too (W's rows are read in 16-byte chunks along N). BMxBN: the CTA tile
//                 (128x128, 128x64, 64x64; the heuristic in src/cuda/ops/linear.cu picks by shape).
//   cuda.wgmma.128x128, cuda.wgmma.64x128  the same three products and error on Hopper's wgmma
//                 (compute capability 9.0 only; built for sm_90a when the CUDA architectures
//                 include 90), the same operand rules. W is split once per call into hi and lo
//                 copies (scratch from exec's allocator, 8 bytes per weight); X is split in
//                 registers. 67-105 TFLOP/s on the H200 against mma.sync's 47-57; the heuristic
//                 takes it wherever the grid has at least half a 128x128 tile per multiprocessor
//                 (src/cuda/sm90a/linear_wgmma.cu). The only variants for heads and a second
//                 input: then K % 32 == 0 (with heads) and N / blocks a multiple of 128 (a tile
//                 never spans two heads), X2 and W2 by X's and W's operand rules.
//                 A split made once (linear_split_weight) and passed as LinearArgs::w_split
//                 saves that launch where W does not change between calls.
//   The CPU and other CUDA cases are left to the caller's BLAS (the torch layer: at::linear);
//   linear() throws when no variant is eligible, so that a caller never gets a silent fallback.
//
// Errors: shapes, dtypes, devices, aliasing of Y with an input, and an unknown or ineligible
//   requested variant throw tessera::Error naming the argument.
#include <string>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/tune/registry.hpp"
#include "tessera/tune/tuner.hpp"

namespace tessera::ops {

struct LinearArgs {
  DenseView X;                  // M x K
  DenseView W;                  // N x K (K x N with w_transposed)
  DenseView Y;                  // M x N (written)
  const void* bias = nullptr;   // N values of Y's dtype, or nullptr
  DenseView R{};                // M x N residual added to Y, or absent (data null)
  bool w_transposed = false;    // W stored K x N: Y = X W
  int64_t blocks = 1;           // heads: X is M x (blocks K), output column j reads block j / (N / blocks)
  DenseView X2{};               // M x K2 second input for every column, or absent (K2 = 0)
  DenseView W2{};               // N x K2, with X2
  // W (and W2) as the wgmma variants read them (linear_split_weight), made once by a caller whose
  // weights do not change between calls (an inference loop), or null: those variants split them on
  // every call (a launch and an allocation of their own). Not with w_transposed; the other
  // variants ignore it.
  const void* w_split = nullptr;
  size_t w_split_bytes = 0;

  int64_t n() const { return w_transposed ? W.cols : W.rows; }  // output width N
  int64_t k() const { return w_transposed ? W.rows : W.cols; }  // input width K of one block
  bool has_x2() const { return X2.cols > 0; }  // a second input of width 0 adds nothing
  bool plain() const { return blocks == 1 && !has_x2(); }  // what every variant runs
};

// Y = X W^T (+ b). variant "" = requested (TESSERA_VARIANT_LINEAR) > tuned > cache > heuristic.
void linear(const LinearArgs& args, const Exec& exec, const std::string& variant = "");
// Whether some registered variant can run these arguments on exec's device (the torch layer asks
// before choosing between tessera and its own BLAS).
bool linear_supported(const LinearArgs& args, const Exec& exec);
tune::Registry<LinearArgs>& linear_registry();
void validate_linear(const LinearArgs& args);

// The split copy for LinearArgs::w_split of an N x K weight W and, for a second input, its N x K2
// W2 (absent: cols 0): the hi and lo tf32 parts in the wgmma tiles' layout, 8 bytes per weight
// (rounded up to whole tiles); with heads it is W's (one block's K wide) as it is.
// linear_split_weight_bytes is 0 where no variant reads one: not fp32, not on a compute capability
// 9.0 device, or a build without wgmma code. linear_split_weight writes it into `out` (that many
// bytes, device memory on W's device), queued on exec's stream; it stays valid while W's and
// W2's values do not change.
size_t linear_split_weight_bytes(const DenseView& W, const DenseView& W2 = {});
void linear_split_weight(const DenseView& W, const DenseView& W2, void* out, size_t bytes, const Exec& exec);

// The projection's parameter gradients in one pass over dY: dW = dY^T X and, when db is given,
// db = the column sums of dY (a Linear's weight and bias gradients).
//   DY: M x N, X: M x K, DW: N x K (overwritten), db: N values of DW's dtype or nullptr. Same dtype
//   and device for all; rows may be strided. M = 0 gives zeros.
// Backends and variants (linear_weight_grad_registry()):
//   reference     plain loops, double accumulation, every floating dtype (the oracle).
//   cuda.wgmma.dw fp32 on Hopper's wgmma as the three tf32 products of the projection (same error
//                 bound), M split across the machine into fixed slices whose partial sums are added
//                 in a fixed order (deterministic), db from the same loads of dY. Needs compute
//                 capability 9.0, N % 4 == 0, K % 4 == 0, 16-byte aligned DY and X with row strides
//                 multiples of 4, 8-byte aligned DW with an even row stride.
//   Elsewhere the caller's BLAS (the torch layer: dY^T X and the column sums).
struct LinearGradArgs {
  DenseView DY;             // M x N
  DenseView X;              // M x K
  DenseView DW;             // N x K (written)
  void* db = nullptr;       // N values of DW's dtype (written), or nullptr
};

void linear_weight_grad(const LinearGradArgs& args, const Exec& exec, const std::string& variant = "");
bool linear_weight_grad_supported(const LinearGradArgs& args, const Exec& exec);
tune::Registry<LinearGradArgs>& linear_weight_grad_registry();
void validate_linear_weight_grad(const LinearGradArgs& args);

}  // namespace tessera::ops
