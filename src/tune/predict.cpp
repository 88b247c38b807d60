// Prediction rules of predict.hpp. Each rule encodes one mechanism (see docs/tuning.md):
//   WSB pays when tensor-core tiles are full enough to beat per-entry gathers; the
//   feature-parallel CSR kernel packs several rows per warp for F <= 32; heavy-row splitting pays
//   only on skewed degree distributions; reordering pays when ids carry no locality, the graph has
//   enough neighbours per row to share, and the feature matrix does not already fit in L2.
#include "tessera/tune/predict.hpp"

#include <cstdio>
#include <map>
#include <mutex>

#include "tessera/ops/attention.hpp"
#include "tessera/ops/segment_reduce.hpp"
#include "tessera/ops/spmm.hpp"

namespace tessera::tune {

const PredictRules& predict_rules() {
  static const PredictRules r;
  return r;
}

PredictInput predict_input(const GraphStats& s, int64_t width, DType dtype, const Device& device) {
  PredictInput in;
  in.nodes = s.nodes;
  in.edges = s.edges;
  in.degree_mean = s.degree_mean;
  in.degree_skewness = s.degree_skewness;
  in.degree_max = s.degree_max;
  in.fill_16x8 = s.tiles_16x8.tile_rows > 0 ? s.tiles_16x8.mean_fill : -1.0;
  in.fill_8x8 = s.tiles_8x8.tile_rows > 0 ? s.tiles_8x8.mean_fill : -1.0;
  in.width = width;
  in.dtype = dtype;
  in.cuda = device.is_cuda();
  return in;
}

std::string predict_spmm(const PredictInput& in) {
  const auto& r = predict_rules();
  if (!in.cuda) return "cpu.rows";
  const bool half = in.dtype == DType::f16 || in.dtype == DType::bf16;
  if (half && in.width >= r.wsb_min_width) {
    const std::string wsb = in.dtype == DType::f16 ? "cuda.wsb.f16" : "cuda.wsb.bf16";
    // Dense tiles: a tensor-core tile does 16x8 multiply-adds per loaded X fragment.
    if (in.fill_16x8 >= r.wsb_min_fill_half) return wsb;
    // Small graphs with a few neighbours per row are latency-bound: a 16-row window's MMA chain
    // finishes in fewer dependent steps than per-row gathers (measured: Cora, PubMed, clustered
    // 32k; road-like graphs of degree ~3 and the 262k-row grid are faster on CSR).
    if (in.degree_mean >= r.wsb_small_min_degree &&
        (in.nodes <= r.wsb_small_nodes || (in.nodes <= r.wsb_medium_nodes && in.width <= r.wsb_medium_max_width)))
      return wsb;
  }
  if (in.dtype == DType::f32 && in.width >= r.wsb_min_width && in.fill_16x8 >= r.wsb_min_fill_tf32) return "cuda.wsb.tf32";
  // cuSPARSE's CSR algorithms are tuned for f64.
  if (in.dtype == DType::f64 && in.width > r.feature_parallel_max_width) return "cuda.cusparse";
  // Scattered ids (few nonzeros share an 8x8 tile): nearly every gather misses L2, so memory-level
  // parallelism decides, and cuSPARSE's nnz-balanced f32 kernels beat a group per row from F = 64
  // (measured: scrambled R-MAT, BA, Cora, PubMed; R-MAT in generator order, fill 0.022, is not).
  if (in.dtype == DType::f32 && in.width >= r.cusparse_min_width && in.fill_8x8 >= 0 &&
      in.fill_8x8 < r.cusparse_max_fill_8x8)
    return "cuda.cusparse";
  // Narrow rows: several rows per warp keep lanes busy on skewed graphs; on regular ones the
  // warp-row kernel's 16-byte loads and 4 gathers in flight win.
  if (in.width <= r.feature_parallel_max_width)
    return in.max_over_mean() >= r.feature_parallel_min_skew ? "cuda.csr.feature_parallel" : "cuda.csr.warp_row";
  return "cuda.csr.warp_row";
}

ReducePrediction predict_segment_reduce(const PredictInput& in, bool arg_reduce) {
  const auto& r = predict_rules();
  if (!in.cuda) return {"cpu", 0};
  if (arg_reduce && in.dtype == DType::f64) return {"cuda.none.w8", 0};  // no packed 64-bit key for f64
  // Split the top 1% of rows on every graph. Measured on the H200 (tessera tune --bench, 80
  // cases): q0.99.w8.c256 ran within 10% of the best variant in all of them. On power-law graphs
  // the rows between the 99th and 99.9th percentile (hundreds of edges) are the critical path of
  // a one-warp-per-row pass, so q0.999 was 2.4x slower on R-MAT; on regular graphs the split
  // marks rows that are barely longer than the rest and costs nothing measurable.
  const std::string chunk = in.degree_max > r.big_chunk_degree ? ".c1024" : ".c256";
  return {"cuda.q0.99.w8" + chunk, 0.99};
}

std::string predict_attention(const PredictInput& in, bool wsb_registered) {
  const bool half = in.dtype == DType::f16 || in.dtype == DType::bf16;
  if (wsb_registered && in.cuda && half) return "wsb";
  return "csr";
}

namespace {
std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}
}  // namespace

ReorderPrediction predict_reorder(const PredictInput& in) {
  const auto& r = predict_rules();
  const double bytes = double(in.nodes) * double(in.width) * double(dtype_size(in.dtype));
  if (in.degree_mean < r.reorder_min_degree)
    return {false, "low degree (mean " + fixed(in.degree_mean) + " < " + fixed(r.reorder_min_degree) +
                       ", road-like): few neighbours to share a cache line"};
  if (bytes < r.reorder_min_bytes) return {false, "features fit in L2: gathers hit cache in any order"};
  if (in.fill_8x8 < 0) return {false, "tile fill unknown (stats without tiles)"};
  if (in.fill_8x8 >= r.reorder_max_fill)
    return {false, "ids already local (8x8 fill " + fixed(in.fill_8x8) + ")"};
  return {true, "scattered ids (8x8 fill " + fixed(in.fill_8x8) + "), mean degree " + fixed(in.degree_mean) +
                    ", features exceed L2"};
}

namespace {
std::mutex g_mu;
std::map<uint64_t, GraphStats>& stats_table() {
  static std::map<uint64_t, GraphStats> t;
  return t;
}

// What a heuristic can know from its arguments alone, completed by remembered stats.
template <class I>
PredictInput input_of(const CsrView<I>& A, int64_t width, DType dtype, const Device& d) {
  GraphStats s;
  if (!remembered_stats(A.id, s)) {
    s.nodes = A.rows;
    s.edges = A.nnz;
    s.degree_mean = A.rows ? double(A.nnz) / double(A.rows) : 0.0;
    s.degree_max = int64_t(s.degree_mean);  // unknown: treated as regular
  }
  return predict_input(s, width, dtype, d);
}

}  // namespace

template <class I>
void use_predictions(Registry<ops::SpmmArgs<I>>& reg) {
  reg.set_heuristic([](const ops::SpmmArgs<I>& a, const Device& d) {
    return predict_spmm(input_of(a.A, a.X.cols, a.X.dtype, d));
  });
}
template <class I>
void use_predictions(Registry<ops::SegmentReduceArgs<I>>& reg) {
  reg.set_heuristic([](const ops::SegmentReduceArgs<I>& a, const Device& d) {
    return predict_segment_reduce(input_of(a.A, a.X.cols, a.X.dtype, d), ops::has_arg(a.reduce)).variant;
  });
}
// The prediction only refines the family's own choice: where that is cuda.fused, a Transformer
// whose graph clears the WSB bar takes cuda.wsb (an ineligible one falls back to cuda.fused); every
// other choice of the family's heuristic (cuda.multi_query, the CPU's) stands.
template <class I>
void use_predictions(Registry<ops::AttentionArgs<I>>& reg) {
  reg.set_heuristic([own = reg.heuristic()](const ops::AttentionArgs<I>& a, const Device& d) -> std::string {
    const std::string chosen = own ? own(a, d) : std::string(d.is_cuda() ? "cuda.fused" : "cpu.fused");
    if (chosen != "cuda.fused" || a.kind != ops::AttentionKind::transformer) return chosen;
    return predict_attention(input_of(a.A, a.channels, a.query.dtype, d), true) == "wsb" ? "cuda.wsb" : chosen;
  });
}
template void use_predictions(Registry<ops::SpmmArgs<int32_t>>&);
template void use_predictions(Registry<ops::SpmmArgs<int64_t>>&);
template void use_predictions(Registry<ops::SegmentReduceArgs<int32_t>>&);
template void use_predictions(Registry<ops::SegmentReduceArgs<int64_t>>&);
template void use_predictions(Registry<ops::AttentionArgs<int32_t>>&);
template void use_predictions(Registry<ops::AttentionArgs<int64_t>>&);

void remember_stats(uint64_t graph_id, const GraphStats& s) {
  if (!graph_id) return;  // anonymous graphs bypass every cache
  std::lock_guard<std::mutex> lock(g_mu);
  if (stats_table().size() > 4096) stats_table().clear();
  stats_table()[graph_id] = s;
}

bool remembered_stats(uint64_t graph_id, GraphStats& out) {
  if (!graph_id) return false;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = stats_table().find(graph_id);
  if (it == stats_table().end()) return false;
  out = it->second;
  return true;
}

void install_predicted_heuristics() {
  use_predictions(ops::spmm_registry<int32_t>());
  use_predictions(ops::spmm_registry<int64_t>());
  use_predictions(ops::segment_reduce_registry<int32_t>());
  use_predictions(ops::segment_reduce_registry<int64_t>());
  use_predictions(ops::attention_forward_registry<int32_t>());
  use_predictions(ops::attention_forward_registry<int64_t>());
}

}  // namespace tessera::tune
