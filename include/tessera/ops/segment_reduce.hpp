#pragma once
// Segment-reduce family (SAGE aggregation): degree-aware max / min / sum / mean over in-neighbours.
//
// Semantics (A = in-neighbour CSR, row i = the sources j of edges j -> i, see graph/csr.hpp)
//   Y[i, f] = REDUCE over entries k of row i of X[col[k], f]          (Y is overwritten)
//   sum : plain sum; duplicate edges count once per occurrence; A's edge weights are IGNORED.
//   mean: sum / (number of entries of row i), duplicates included.
//   max, min: the extreme value; arg[i, f] = the winning SOURCE INDEX j = col[k] (not the edge k).
//   Empty rows: Y = 0 and arg = -1, for every reduction.
//
// Tie rule (max/min, every backend, exact): among entries of equal value the smallest source index j
//   wins, independent of the order of the row's entries (rows need not be sorted; a duplicate edge
//   has the same j as its twin, so it ties with itself and nothing changes). -0.0 and +0.0 compare
//   equal (IEEE), so Y may hold either zero; arg still follows the tie rule.
// NaN rule: NaN propagates. If any X[j, f] of the row is NaN, Y[i, f] = NaN and arg[i, f] = the
//   smallest j with X[j, f] NaN (NaN ranks above everything for max and below everything for min).
//   sum/mean propagate NaN arithmetically. NaN never disappears silently.
//
// Types: X, Y of one dtype in f32, f64, f16, bf16; indices int32 or int64; arg always int64,
//   contiguous rows x F (ld = F). Accumulation in float (double for f64); the reference uses double.
//   max/min are exact (no rounding: the output is one of the inputs). Offsets are 64-bit wherever
//   rows x F or nnz x F can pass 2^31.
//
// Backward (segment_reduce_backward), dX overwritten (A.cols x F):
//   max/min : dX[arg[i, f], f] += dY[i, f] for every i, f with arg >= 0 (ties: only the winner).
//   sum     : dX = A^T dY;  mean: dX = A^T (dY / deg), deg = row length.
//
// Backends and variants (segment_reduce_registry): "reference" (plain loops, the oracle), "cpu"
//   (OpenMP over rows, SIMD over a feature tile), and on CUDA the degree-aware family
//   "cuda.<split>.w<W>.c<C>":
//     split  = q0.99 | q0.999 | none: nodes whose in-degree exceeds the degree quantile (and 2 C)
//              are HEAVY; the rest are LIGHT. The partition lists are cached per graph id.
//     light  : one warp per node, W warps per block, lanes over features (coalesced), state in
//              registers.
//     heavy  : a grid over (heavy node, chunk of C edges); each block reduces its chunk and merges
//              it with one 64-bit atomicMax/atomicMin per feature on a packed word (order-preserving
//              32-bit key of the value in the high half, the source index in the low half, encoded
//              so that ties pick the smallest j for both max and min), then a coalesced pass unpacks
//              values and args. sum/mean merge with atomicAdd in the accumulation type.
//   CUDA max/min need A.cols < 2^32 - 1 (the packed word holds j in 32 bits); f64 max/min run the
//   light path only (no 32-bit key), so the split variants are not eligible for them.
//
// Errors: shape, dtype and device mismatches, a missing arg buffer where one is required, malformed
//   offsets or out-of-range column ids (checked on the host for host graphs, once per graph id on
//   the device), an unknown or ineligible variant: tessera::Error naming the argument.
#include <cstdint>
#include <string>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/tune/registry.hpp"
#include "tessera/tune/tuner.hpp"

namespace tessera::ops {

enum class Reduce : uint8_t { sum, mean, max, min };
Reduce parse_reduce(const std::string& s);   // "sum"/"add", "mean", "max", "min"; throws on others
const char* reduce_name(Reduce r);
inline bool has_arg(Reduce r) { return r == Reduce::max || r == Reduce::min; }

template <class I>
struct SegmentReduceArgs {
  CsrView<I> A;                   // values ignored
  Reduce reduce = Reduce::sum;
  DenseView X;                    // A.cols x F (rows may be strided, ld >= F)
  DenseView Y;                    // A.rows x F (written)
  int64_t* arg = nullptr;         // max/min: A.rows x F, contiguous, written; nullptr = not wanted
};

template <class I>
struct SegmentReduceBackwardArgs {
  CsrView<I> A;                   // the forward graph
  Reduce reduce = Reduce::sum;
  DenseView dY;                   // A.rows x F
  const int64_t* arg = nullptr;   // max/min: the forward's arg (required)
  DenseView dX;                   // A.cols x F (overwritten)
};

// Forward. variant "" = the family's choice through tune::choose (TESSERA_VARIANT_SEGMENT_REDUCE,
// then timing when tuning is on, then the tuner cache, then the heuristic); otherwise a registered name.
template <class I>
void segment_reduce(const SegmentReduceArgs<I>& args, const Exec& exec, const std::string& variant = "");

// Backward. backend "" = the device's fast backend, or "reference" / "cpu" / "cuda".
template <class I>
void segment_reduce_backward(const SegmentReduceBackwardArgs<I>& args, const Exec& exec,
                             const std::string& backend = "");

// The forward variant table (with its heuristic); conformance tests iterate it.
template <class I> tune::Registry<SegmentReduceArgs<I>>& segment_reduce_registry();
// The variant segment_reduce() would run and why (validates the arguments first).
template <class I>
tune::Choice segment_reduce_choose(const SegmentReduceArgs<I>& args, const Exec& exec, const std::string& variant = "");

// Bytes the forward must move at least: rowptr + col read once, X's gathered rows (nnz x F, the
// per-edge read that no cache removes on large graphs), Y (+ arg) written once. Benchmarks report
// achieved bandwidth against this floor.
template <class I> double segment_reduce_io_bytes(const SegmentReduceArgs<I>& args);

// Degree threshold of a split: nodes with in-degree > the returned value are heavy. quantile <= 0
// means no split (returns INT64_MAX). Exposed for tests and the benchmark.
int64_t heavy_degree_threshold(const int64_t* degrees, int64_t n, double quantile, int64_t chunk);

}  // namespace tessera::ops
