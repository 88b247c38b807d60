// Prediction rules on synthetic statistics (each rule's both sides), on generated graphs whose
// character is known, and the installed heuristics answering through the family registries.
#include <gtest/gtest.h>

#include "support/testing.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/ops/attention.hpp"
#include "tessera/ops/segment_reduce.hpp"
#include "tessera/ops/spmm.hpp"
#include "tessera/tune/predict.hpp"

namespace tessera {
namespace {
using tune::PredictInput;

PredictInput synthetic(double mean, int64_t max, double fill16, double fill8, int64_t width, DType dt,
                       bool cuda = true, int64_t nodes = 1 << 20) {
  PredictInput in;
  in.nodes = nodes;
  in.edges = int64_t(mean * double(nodes));
  in.degree_mean = mean;
  in.degree_max = max;
  in.fill_16x8 = fill16;
  in.fill_8x8 = fill8;
  in.width = width;
  in.dtype = dt;
  in.cuda = cuda;
  return in;
}

TEST(Predict, SpmmRules) {
  const auto& r = tune::predict_rules();
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, 0.5, 0.5, 128, DType::f32, false)), "cpu.rows");
  // Full tiles: tensor cores for half types from the lower bar, for f32 (tf32) only from the higher.
  const double mid = (r.wsb_min_fill_half + r.wsb_min_fill_tf32) / 2;
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, mid, mid, 64, DType::f16)), "cuda.wsb.f16");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, mid, mid, 64, DType::bf16)), "cuda.wsb.bf16");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, mid, mid, 64, DType::f32)), "cuda.csr.warp_row");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, r.wsb_min_fill_tf32, 0.3, 64, DType::f32)), "cuda.wsb.tf32");
  // Sparse tiles or narrow features: CSR kernels.
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, r.wsb_min_fill_half / 2, 0.01, 64, DType::f16)), "cuda.csr.warp_row");
  // Narrow features: several rows per warp only on skewed graphs.
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, 0.9, 0.9, r.wsb_min_width - 8, DType::f16)), "cuda.csr.warp_row");
  const auto skewed_max = int64_t(16 * r.feature_parallel_min_skew);
  EXPECT_EQ(tune::predict_spmm(synthetic(16, skewed_max, 0.9, 0.9, r.wsb_min_width - 8, DType::f16)),
            "cuda.csr.feature_parallel");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, -1, -1, 32, DType::f32)), "cuda.csr.warp_row");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, skewed_max, -1, -1, 32, DType::f32)), "cuda.csr.feature_parallel");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, -1, -1, 33, DType::f32)), "cuda.csr.warp_row");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, 0.01, 0.01, 256, DType::f64)), "cuda.cusparse");
  // Scattered ids: cuSPARSE for f32 from its minimum width, not below it, not for local ids.
  const double scattered = r.cusparse_max_fill_8x8 / 2, local = r.cusparse_max_fill_8x8 * 2;
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, 0.01, scattered, r.cusparse_min_width, DType::f32)), "cuda.cusparse");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, 20, 0.01, local, r.cusparse_min_width, DType::f32)), "cuda.csr.warp_row");
  EXPECT_EQ(tune::predict_spmm(synthetic(16, skewed_max, 0.01, scattered, 32, DType::f32)),
            "cuda.csr.feature_parallel");
  // Small half-precision graphs: WSB when rows have a few neighbours, at any width up to the
  // small-graph size and up to the medium width below the medium size.
  const double deg = r.wsb_small_min_degree + 0.5;
  EXPECT_EQ(tune::predict_spmm(synthetic(deg, 40, 0.01, 0.01, 256, DType::f16, true, r.wsb_small_nodes)), "cuda.wsb.f16");
  EXPECT_EQ(tune::predict_spmm(synthetic(deg, 40, 0.01, 0.01, r.wsb_medium_max_width, DType::bf16, true,
                                         r.wsb_medium_nodes)), "cuda.wsb.bf16");
  EXPECT_EQ(tune::predict_spmm(synthetic(deg, 40, 0.01, 0.01, 2 * r.wsb_medium_max_width, DType::f16, true,
                                         r.wsb_medium_nodes)), "cuda.csr.warp_row");
  EXPECT_EQ(tune::predict_spmm(synthetic(r.wsb_small_min_degree - 0.5, 4, 0.01, 0.01, 64, DType::f16, true, 5000)),
            "cuda.csr.warp_row");
  EXPECT_EQ(tune::predict_spmm(synthetic(deg, 40, 0.01, 0.01, 64, DType::f32, true, 5000)), "cuda.cusparse");
}

TEST(Predict, SegmentReduceSplitsTheTopPercentAndWidensChunksForHugeHubs) {
  const auto& r = tune::predict_rules();
  const double mean = 10;
  auto at_ratio = [&](double ratio, bool arg = false, DType dt = DType::f32) {
    return tune::predict_segment_reduce(synthetic(mean, int64_t(mean * ratio), -1, -1, 64, dt), arg);
  };
  for (double ratio : {1.0, 4.0, 50.0, 500.0}) {
    EXPECT_EQ(at_ratio(ratio).variant, "cuda.q0.99.w8.c256") << "max/mean " << ratio;
    EXPECT_DOUBLE_EQ(at_ratio(ratio).quantile, 0.99);
  }
  const double huge = double(r.big_chunk_degree) * 2 / mean;
  EXPECT_EQ(at_ratio(huge).variant, "cuda.q0.99.w8.c1024");
  EXPECT_EQ(at_ratio(huge, true, DType::f64).variant, "cuda.none.w8");
  EXPECT_EQ(at_ratio(huge, false, DType::f64).variant, "cuda.q0.99.w8.c1024");  // sum/mean: no packed key needed
  EXPECT_EQ(tune::predict_segment_reduce(synthetic(mean, 1000, -1, -1, 64, DType::f32, false)).variant, "cpu");
}

TEST(Predict, AttentionAndReorderRules) {
  const auto& r = tune::predict_rules();
  EXPECT_EQ(tune::predict_attention(synthetic(16, 20, 0.9, 0.9, 64, DType::f16), false), "csr");
  EXPECT_EQ(tune::predict_attention(synthetic(16, 20, 0.9, 0.9, 64, DType::f16), true), "wsb");
  // Every fill measured on the H200 won with cuda.wsb, down to scrambled R-MAT ids (0.0079, near the
  // metric's floor of 1/128): half precision predicts it at any fill; f32 and the host never.
  for (double fill : {0.0079, 0.0103, 0.063, 0.9})
    EXPECT_EQ(tune::predict_attention(synthetic(16, 2000, fill, fill, 64, DType::bf16), true), "wsb") << fill;
  EXPECT_EQ(tune::predict_attention(synthetic(16, 20, 0.9, 0.9, 64, DType::f32), true), "csr");
  EXPECT_EQ(tune::predict_attention(synthetic(16, 20, 0.9, 0.9, 64, DType::f16, false), true), "csr");
  // Scattered, dense enough, too big for L2: reorder. Each condition flipped alone: do not.
  const double low = r.reorder_max_fill / 2;
  EXPECT_TRUE(tune::predict_reorder(synthetic(16, 40, low, low, 256, DType::f32)).reorder);
  EXPECT_FALSE(tune::predict_reorder(synthetic(2.5, 4, low, low, 256, DType::f32)).reorder);  // road-like
  EXPECT_FALSE(tune::predict_reorder(synthetic(16, 40, low, low, 256, DType::f32, true, 2000)).reorder);  // fits L2
  EXPECT_FALSE(tune::predict_reorder(synthetic(16, 40, 0.5, 0.5, 256, DType::f32)).reorder);  // already local
  EXPECT_FALSE(tune::predict_reorder(synthetic(16, 40, -1, -1, 256, DType::f32)).reorder);    // unknown fill
  EXPECT_FALSE(tune::predict_reorder(synthetic(2.5, 4, low, low, 256, DType::f32)).reason.empty());
}

TEST(Predict, GeneratedGraphsLandOnTheExpectedSide) {
  // A power-law R-MAT is skewed and scattered (narrow features: several rows per warp); a grid is
  // regular, road-like and local. Both split the top 1% of rows in a reduction (measured rule).
  const Csr<int64_t> rmat = gen::generate("rmat:scale=12,degree=16,seed=" + std::to_string(testing::seed() % 1000 + 1));
  const Csr<int64_t> grid = gen::generate("grid:rows=64,cols=64");
  const auto in_rmat = tune::predict_input(graph_stats(rmat.view()), 128, DType::f32, Device{DeviceKind::cuda, 0});
  const auto in_grid = tune::predict_input(graph_stats(grid.view()), 128, DType::f32, Device{DeviceKind::cuda, 0});
  EXPECT_DOUBLE_EQ(tune::predict_segment_reduce(in_rmat).quantile, 0.99);
  EXPECT_DOUBLE_EQ(tune::predict_segment_reduce(in_grid).quantile, 0.99);
  auto narrow = [](tune::PredictInput in) { in.width = 16; return tune::predict_spmm(in); };
  EXPECT_EQ(narrow(in_rmat), "cuda.csr.feature_parallel");
  EXPECT_EQ(narrow(in_grid), "cuda.csr.warp_row");
  EXPECT_FALSE(tune::predict_reorder(in_grid).reorder);
  EXPECT_GT(in_grid.fill_8x8, in_rmat.fill_8x8);
}

// On copies of the family registries, so the global heuristics other tests rely on stay as is.
TEST(Predict, HeuristicsUseRememberedStats) {
  auto spmm_reg = ops::spmm_registry<int64_t>();
  auto reduce_reg = ops::segment_reduce_registry<int64_t>();
  tune::use_predictions(spmm_reg);
  tune::use_predictions(reduce_reg);
  const Csr<int64_t> g = gen::generate("grid:rows=40,cols=50");
  Dense<float> X(g.cols, 48), Y(g.rows, 48);
  ops::SegmentReduceArgs<int64_t> a{g.view(), ops::Reduce::sum, X.view(), Y.view(), nullptr};
  ops::SpmmArgs<int64_t> s{g.view(), nullptr, X.view(), Y.view()};
  EXPECT_EQ(reduce_reg.heuristic_choice(a, Device{}), "cpu");
  EXPECT_EQ(spmm_reg.heuristic_choice(s, Device{}), "cpu.rows");
  GraphStats back;
  EXPECT_FALSE(tune::remembered_stats(g.id, back));
  tune::remember_stats(g.id, graph_stats(g.view()));
  ASSERT_TRUE(tune::remembered_stats(g.id, back));
  EXPECT_EQ(back.edges, g.nnz());
  EXPECT_FALSE(tune::remembered_stats(0, back));
#ifdef TESSERA_WITH_CUDA
  // The choice is a name: no kernel runs, so this holds without a GPU. The predicted reduction
  // splits at q0.99 on the regular grid as on the skewed R-MAT (measured rule, docs/tuning.md).
  const Device gpu{DeviceKind::cuda, 0};
  a.A.device = s.A.device = a.X.device = a.Y.device = s.X.device = s.Y.device = gpu;
  EXPECT_EQ(reduce_reg.heuristic_choice(a, gpu), "cuda.q0.99.w8.c256");
  EXPECT_EQ(spmm_reg.heuristic_choice(s, gpu), "cuda.csr.warp_row");
  const Csr<int64_t> r = gen::generate("rmat:scale=11,degree=8");
  tune::remember_stats(r.id, graph_stats(r.view()));
  a.A = r.view();
  a.A.device = gpu;
  Dense<float> Xr(r.cols, 48), Yr(r.rows, 48);
  a.X = Xr.view();
  a.Y = Yr.view();
  a.X.device = a.Y.device = gpu;
  EXPECT_NE(reduce_reg.heuristic_choice(a, gpu).find("cuda.q0.99"), std::string::npos);
#endif
}

#ifdef TESSERA_WITH_CUDA
// The installed attention heuristic names cuda.wsb for a half-precision Transformer on a graph
// whose remembered 16x8 fill clears the bar, falls back to cuda.fused wherever cuda.wsb is not
// eligible, and keeps the family's own choice of cuda.multi_query (names only: no kernel runs, so
// this holds without a GPU).
TEST(Predict, AttentionHeuristicPicksWsbOnlyWhereItApplies) {
  auto reg = ops::attention_forward_registry<int64_t>();
  tune::use_predictions(reg);
  const Device gpu{DeviceKind::cuda, 0};
  const Csr<int64_t> g = gen::generate("grid:rows=64,cols=64");
  tune::remember_stats(g.id, graph_stats(g.view()));
  alignas(16) static char buf[64];  // never dereferenced: the choice reads shapes and pointers
  ops::AttentionArgs<int64_t> a;
  a.A = g.view();
  a.A.device = gpu;
  a.heads = 2;
  a.channels = 32;
  auto mat = [&](int64_t rows) { return DenseView{buf, DType::f16, rows, 64, 64, gpu}; };
  a.query = mat(g.rows);
  a.key = mat(g.cols);
  a.value = mat(g.cols);
  a.out = mat(g.rows);
  EXPECT_EQ(reg.heuristic_choice(a, gpu), "cuda.wsb");
  auto b = a;
  b.dropout = 0.1;
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.fused");
  b = a;
  b.kind = ops::AttentionKind::gatv2;
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.fused");
  b = a;
  b.channels = 24;
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.fused");
  b = a;
  b.query.dtype = b.key.dtype = b.value.dtype = b.out.dtype = DType::f32;
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.fused");
  EXPECT_EQ(reg.heuristic_choice(a, Device{}), "cpu.fused");
  // The global registry keeps its default until the predictions are installed.
  EXPECT_EQ(ops::attention_forward_registry<int64_t>().heuristic_choice(a, gpu), "cuda.fused");
  // A key row shared by the heads that is also the value (the folded TransformerConv): the family's
  // heuristic takes cuda.multi_query wherever it is eligible (8 heads of 32: 8 per item; 2 heads: 2
  // per item), and the predictions keep that choice; with an odd head count (3: one per item, not
  // eligible) both leave it to cuda.fused.
  b = a;
  b.query.dtype = b.key.dtype = b.value.dtype = b.out.dtype = DType::f32;
  b.kv_heads = 1;
  b.heads = 8;
  b.key = b.value = DenseView{buf, DType::f32, g.cols, 32, 32, gpu};
  b.out = b.query = DenseView{buf, DType::f32, g.rows, 256, 256, gpu};
  EXPECT_EQ(ops::attention_forward_registry<int64_t>().heuristic_choice(b, gpu), "cuda.multi_query");
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.multi_query");
  b.heads = 2;
  b.out = b.query = DenseView{buf, DType::f32, g.rows, 64, 64, gpu};
  EXPECT_EQ(ops::attention_forward_registry<int64_t>().heuristic_choice(b, gpu), "cuda.multi_query");
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.multi_query");
  b.heads = 3;
  b.out = b.query = DenseView{buf, DType::f32, g.rows, 96, 96, gpu};
  EXPECT_EQ(ops::attention_forward_registry<int64_t>().heuristic_choice(b, gpu), "cuda.fused");
  EXPECT_EQ(reg.heuristic_choice(b, gpu), "cuda.fused");
}
#endif

}  // namespace
}  // namespace tessera
