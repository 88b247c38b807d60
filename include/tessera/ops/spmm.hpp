#pragma once
// SpMM family: Y = A . X with A a weighted sparse graph (CSR rows = targets, see graph/csr.hpp),
// and the GCN normalizations that produce A's weights.
//
// Semantics
//   Y[i, :] = sum over entries k of row i: w[k] * X[col[k], :] (+ bias)  (Y is overwritten; empty rows
//             -> 0, or the bias)
//   w: `values` when given, else A.values, else 1.
//   bias: optional F values of the accumulation type, added to every row after the sum (a layer's
//   `+ b` fused into the single write of Y instead of a second read-modify-write pass over it).
//   Value type: accumulation type of X's dtype (double for float64, float for float32/16/bf16).
//   X: A.cols x F, Y: A.rows x F, both on A's device, same dtype, rows may be strided (ld >= F).
//   Accumulation in float (double for float64) on every backend; the reference uses double.
//
// Normalization (normalize()): none, left D^-1 A, right A D^-1, both D^-1/2 A D^-1/2, where for
//   `both` we follow PyG's gcn_norm exactly: add remaining self-loops (nodes without one get a loop
//   of weight fill = 1, or 2 when improved), deg[i] = sum of weights of row i (weighted in-degree
//   at the target), w'[k] = deg^-1/2[row] * w[k] * deg^-1/2[col], with 1/0 -> 0. left uses the
//   row's degree, right the column's (source's) weighted out-degree of the same matrix.
//
// Backward: dX = A^T dY (spmm on the cached transpose), dw[k] = <dY[row k], X[col k]> (sddmm).
//
// Errors: shape, dtype and device mismatches, and an unknown or ineligible variant, throw
//   tessera::Error naming the argument ("spmm: X has 5 rows but A has 7 columns").
#include <cstdint>
#include <string>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/tune/registry.hpp"
#include "tessera/tune/tuner.hpp"

namespace tessera::ops {

enum class Norm : uint8_t { none, left, right, both };
Norm parse_norm(const std::string& s);

struct NormOptions {
  Norm norm = Norm::both;
  bool add_self_loops = true;     // used by `both` (PyG's add_remaining_self_loops)
  bool improved = false;          // self-loop fill 2 instead of 1
};

// Host-side normalization: returns the graph (with loops added when asked) whose values are the
// normalized weights (float). Input weights: g.values or 1.
template <class I> Csr<I> normalize(const CsrView<I>& g, const NormOptions& opt);

template <class I>
struct SpmmArgs {
  CsrView<I> A;
  const void* values = nullptr;   // nnz weights of the accumulation type, or nullptr (A.values/1)
  DenseView X;                    // A.cols x F
  DenseView Y;                    // A.rows x F (written)
  const void* bias = nullptr;     // F values of the accumulation type, or nullptr (no bias)
};

template <class I>
struct SddmmArgs {                // dw[k] = <dY[row(k)], X[col(k)]>
  CsrView<I> A;
  DenseView dY;                   // A.rows x F
  DenseView X;                    // A.cols x F
  void* dw = nullptr;             // nnz values of the accumulation type (written)
};

// Runs Y = A X. variant "" = the tuner's choice (requested > cache > heuristic).
template <class I> void spmm(const SpmmArgs<I>& args, const Exec& exec, const std::string& variant = "");
template <class I> void sddmm(const SddmmArgs<I>& args, const Exec& exec);

// The variant tables (reference, cpu, cuda.* entries); conformance tests iterate them.
template <class I> tune::Registry<SpmmArgs<I>>& spmm_registry();

// --- additions (stable, additive) --------------------------------------------------------------
// Checks shapes, dtypes, devices and aliasing; throws tessera::Error naming the argument.
// spmm()/sddmm() call these once; exposed so callers (torch layer) can fail early.
template <class I> void validate_spmm(const SpmmArgs<I>& args, const Exec& exec);
template <class I> void validate_sddmm(const SddmmArgs<I>& args, const Exec& exec);

// The variant spmm() would run for these arguments, and why ("requested", "cache", "heuristic",
// "tuned"). Order: `variant` argument, else TESSERA_VARIANT_SPMM, then (when tuning is enabled:
// tune::set_tuning / TESSERA_TUNE=1) timing of every eligible variant, else the persistent cache,
// else the family heuristic. A requested variant that is unknown or ineligible throws.
template <class I>
tune::Choice spmm_choose(const SpmmArgs<I>& args, const Exec& exec, const std::string& variant = "");

// Bytes an SpMM must move at least (A read once: rowptr + col + values; X read once; Y written
// once; the bias read once), and the per-edge gather volume E * F * sizeof(T) for context. Benchmarks report achieved
// bandwidth against `floor`.
struct SpmmIo {
  double floor_bytes = 0;
  double gather_bytes = 0;
};
template <class I> SpmmIo spmm_io(const SpmmArgs<I>& args);

// Drops per-graph CUDA state (cuSPARSE descriptors, workspaces, timed algorithm choices).
// Graphs are keyed by CsrView::id; id 0 (anonymous) bypasses the caches. No-op without CUDA.
void spmm_clear_caches();

}  // namespace tessera::ops
