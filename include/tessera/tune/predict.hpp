#pragma once
// Variant choice from graph statistics, before any timing. The rules (documented with their
// reasons in docs/tuning.md) read only what is known when a graph is loaded: average degree,
// degree skewness and max/mean ratio, mean 16x8 / 8x8 tile fill, feature width and dtype.
// `tessera tune` measures how often the prediction is within 10% of the best timed variant.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/graph/stats.hpp"

namespace tessera::ops {
template <class I> struct SpmmArgs;
template <class I> struct SegmentReduceArgs;
template <class I> struct AttentionArgs;
}  // namespace tessera::ops

namespace tessera::tune {

template <class Args> class Registry;

struct PredictInput {
  int64_t nodes = 0, edges = 0;
  double degree_mean = 0, degree_skewness = 0;
  int64_t degree_max = 0;
  double fill_16x8 = -1, fill_8x8 = -1;   // mean tile fill in [0, 1]; < 0 = unknown (not computed)
  int64_t width = 0;                      // feature width F
  DType dtype = DType::f32;
  bool cuda = true;
  // Ratio the families' skew classes use: max row length over mean (>= 1).
  double max_over_mean() const { return double(degree_max) / (degree_mean > 1 ? degree_mean : 1.0); }
};
PredictInput predict_input(const GraphStats& s, int64_t width, DType dtype, const Device& device);

// Thresholds of the rules (exposed so tests and the docs refer to one place).
struct PredictRules {
  double wsb_min_fill_half = 0.10;   // f16/bf16: WSB tensor cores from this mean 16x8 fill
  double wsb_min_fill_tf32 = 0.25;   // f32 (tf32 mma): a higher bar, the CSR f32 kernels are strong
  int64_t wsb_min_width = 16;        // below one 16-feature n-tile pair the CSR kernels win
  int64_t feature_parallel_max_width = 32;
  double feature_parallel_min_skew = 8;  // ... and only when max/mean degree reaches this
  double wsb_small_min_degree = 3.5;     // f16/bf16 WSB on small graphs: mean degree from this
  int64_t wsb_small_nodes = 20000;       // ... up to this many nodes at any width
  int64_t wsb_medium_nodes = 32768;      // ... or up to this many nodes
  int64_t wsb_medium_max_width = 64;     // ... at widths up to this
  int64_t cusparse_min_width = 64;       // f32: cuSPARSE from this width when ids are scattered
  double cusparse_max_fill_8x8 = 0.02;   // ... (mean 8x8 tile fill below this)
  int64_t big_chunk_degree = 16384;  // segment_reduce: chunks of 1024 edges when the max degree exceeds this
  double reorder_max_fill = 0.06;    // reorder when the 8x8 fill is below this (ids carry no locality)
  double reorder_min_degree = 4;     // ... and the graph is not road-like
  double reorder_min_bytes = 32e6;   // ... and the gathered features do not fit in L2 anyway
};
const PredictRules& predict_rules();

// spmm: "cpu.rows" on the host; on CUDA "cuda.wsb.<f16|bf16|tf32>", "cuda.csr.feature_parallel"
// or "cuda.csr.warp_row"; f64 at F > 32: "cuda.cusparse".
std::string predict_spmm(const PredictInput& in);

// segment_reduce: the variant name and the heavy-row quantile it implies (0 = no split).
struct ReducePrediction {
  std::string variant;
  double quantile = 0;
};
ReducePrediction predict_segment_reduce(const PredictInput& in, bool arg_reduce = false);

// attention (the Transformer; GATv2 has no WSB variant): "csr" (the fused CSR kernel) or "wsb";
// the caller maps it to a registered variant. WSB is predicted on CUDA for f16/bf16 whenever it
// is registered, at any fill: on the H200 it beat the CSR kernel on every graph measured, 2.2-13x,
// down to scrambled R-MAT ids (16x8 fill 0.0079, near the metric's floor of 1/128: every source
// row gathered once per entry, as the CSR kernel reads them), where the win is the tensor-core
// window pass itself, not reuse.
std::string predict_attention(const PredictInput& in, bool wsb_registered);

// Whether reordering (METIS/PBR) is predicted to pay off, with a one-line reason.
struct ReorderPrediction {
  bool reorder = false;
  std::string reason;
};
ReorderPrediction predict_reorder(const PredictInput& in);

// Stats remembered per graph id (CsrView::id) for the family heuristics, which only see
// arguments: `tessera tune` and callers that computed stats on the host register them here.
void remember_stats(uint64_t graph_id, const GraphStats& s);
bool remembered_stats(uint64_t graph_id, GraphStats& out);

// Sets a registry's heuristic to the predictions above (reading remembered stats by graph id,
// else only the width, dtype and mean degree visible in the arguments).
template <class I> void use_predictions(Registry<ops::SpmmArgs<I>>& reg);
template <class I> void use_predictions(Registry<ops::SegmentReduceArgs<I>>& reg);
template <class I> void use_predictions(Registry<ops::AttentionArgs<I>>& reg);  // the forward's

// Replaces the global spmm, segment_reduce and attention-forward family heuristics (int32 and int64) with the
// predictions above. Additive: explicit requests, tuning and the cache still take precedence, and
// a prediction naming an ineligible variant falls back to the first eligible one (registry rule).
// Not installed by default; `tessera tune` installs it.
void install_predicted_heuristics();

}  // namespace tessera::tune
