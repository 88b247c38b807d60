// Marginalized graph kernel: CUDA (persistent work queue) against the CPU solver, which the unit
// tests tie to the dense oracle. Runs on the GPU machine only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <random>
#include <string>

#include "support/mma_emulation.hpp"
#include "support/testing.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/kernels/marginalized.hpp"
#include "unit/graph_kernel_support.hpp"

namespace tessera::kernels {
namespace {

// `scale` (optional, same shape) is the size errors are measured against: with lmin = 1 the value
// is a difference that can cancel to ~1e-14, so the error is relative to the unsubtracted kernel.
void expect_close(const Dense<double>& a, const Dense<double>& b, double tol, const char* what,
                  const Dense<double>* scale = nullptr) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) {
      ASSERT_FALSE(std::isnan(a(i, j))) << what << " (" << i << ", " << j << ")";
      const double s = scale ? std::max(std::abs(b(i, j)), std::abs((*scale)(i, j))) : std::abs(b(i, j));
      EXPECT_LE(std::abs(a(i, j) - b(i, j)), tol * s)
          << what << " (" << i << ", " << j << ") cuda " << a(i, j) << " cpu " << b(i, j) << " seed " << testing::seed();
    }
}

TEST(GraphKernelCuda, GramMatchesCpuOnRandomLabeledGraphs) {
  TESSERA_REQUIRE_CUDA();
  std::mt19937_64 rng(testing::seed());
  std::vector<LabeledGraph> gs;
  for (int i = 0; i < 40; ++i) {
    testing::LabeledGraphOptions go;
    go.n = 1 + int(rng() % 70);
    go.edge_prob = i % 5 == 0 ? 0.6 : 0.08;  // dense tiles too
    gs.push_back(testing::random_labeled_graph(go, rng));
  }
  Options base;
  base.q = 0.05;
  base.node_kernel = BaseKernel::TensorProduct(
      {BaseKernel::KroneckerDelta(0.4), BaseKernel::SquareExponential(1.5, Feature::attributes)});
  base.edge_kernel = BaseKernel::KroneckerDelta(0.3);
  const auto unsubtracted = MarginalizedGraphKernel(base).gram(gs);  // lmin = 0 at q = 0.05
  for (DType dt : {DType::f64, DType::f32})
    for (int lmin : {0, 1}) {
      if (dt == DType::f32 && lmin == 1) continue;  // lmin = 1 cancels: relative f32 error is meaningless
      Options o;
      o.q = lmin ? 0.05 : 0.01;
      o.lmin = lmin;
      o.node_kernel = BaseKernel::TensorProduct(
          {BaseKernel::KroneckerDelta(0.4), BaseKernel::SquareExponential(1.5, Feature::attributes)});
      o.edge_kernel = BaseKernel::KroneckerDelta(0.3);
      o.dtype = DType::f64;
      const auto cpu = MarginalizedGraphKernel(o).gram(gs);
      o.dtype = dt;
      o.device = Device{DeviceKind::cuda, 0};
      const auto gpu = MarginalizedGraphKernel(o).gram(gs);
      EXPECT_TRUE(gpu.stats.failed.empty());
      EXPECT_EQ(gpu.stats.pairs, 40 * 41 / 2);
      expect_close(gpu.K, cpu.K, dt == DType::f64 ? 1e-9 : 1e-5, dtype_name(dt), lmin ? &unsubtracted.K : nullptr);
    }
}

TEST(GraphKernelCuda, CrossGramAndNormalizationMatchCpu) {
  TESSERA_REQUIRE_CUDA();
  std::mt19937_64 rng(testing::seed());
  std::vector<LabeledGraph> a, b;
  for (int i = 0; i < 9; ++i) {
    testing::LabeledGraphOptions go;
    go.n = 2 + int(rng() % 40);
    (i % 2 ? a : b).push_back(testing::random_labeled_graph(go, rng));
  }
  Options o;
  o.normalize = true;
  o.node_kernel = BaseKernel::KroneckerDelta(0.5);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.5);
  const auto cpu = MarginalizedGraphKernel(o).gram(a, b);
  o.device = Device{DeviceKind::cuda, 0};
  const auto gpu = MarginalizedGraphKernel(o).gram(a, b);
  expect_close(gpu.K, cpu.K, 1e-10, "cross normalized");
}

// Large spatial graphs: pairs too big for the first scratch slices run in a later launch.
TEST(GraphKernelCuda, LargeProteinLikeGraphsFitAndMatchCpu) {
  TESSERA_REQUIRE_CUDA();
  std::mt19937_64 rng(testing::seed());
  std::vector<LabeledGraph> gs;
  for (int n : {1500, 40, 900}) {
    // Points in a box, edges between neighbours closer than a cutoff (about 8 per node).
    std::uniform_real_distribution<double> u(0, std::cbrt(double(n)));
    std::vector<std::array<double, 3>> pts(static_cast<size_t>(n));
    for (auto& p : pts) p = {u(rng), u(rng), u(rng)};
    std::map<std::pair<int, int>, std::pair<float, int>> e;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (pts[size_t(i)][size_t(k)] - pts[size_t(j)][size_t(k)]) * (pts[size_t(i)][size_t(k)] - pts[size_t(j)][size_t(k)]);
        if (d2 < 1.55) e[{i, j}] = {float(std::exp(-d2)), int(rng() % 2)};
      }
    std::vector<int32_t> nl(static_cast<size_t>(n));
    for (auto& l : nl) l = int32_t(rng() % 20);
    gs.push_back(testing::make_labeled_graph(n, e, nl, Dense<float>(n, 0), true, true));
  }
  Options o;
  o.node_kernel = BaseKernel::KroneckerDelta(0.3);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.5);
  const auto cpu = MarginalizedGraphKernel(o).gram(gs);
  o.device = Device{DeviceKind::cuda, 0};
  const auto gpu = MarginalizedGraphKernel(o).gram(gs);
  EXPECT_TRUE(gpu.stats.failed.empty());
  expect_close(gpu.K, cpu.K, 1e-9, "large");
}

// Dense octiles take the factored (plane) path of the CUDA mat-vec: tiles of one label, of up to
// kMaxPlanes (4) labels, and of more (the sparse fallback), in pairs small enough for the shared
// staging, too large for it, and one pair over the grid-wide large-pair path.
TEST(GraphKernelCuda, DenseTilesOfManyLabelsMatchCpu) {
  TESSERA_REQUIRE_CUDA();
  std::mt19937_64 rng(testing::seed());
  // Under compute-sanitizer (small_run) without the 170- and 600-node graphs.
  const std::vector<int> sizes = testing::small_run() ? std::vector<int>{5, 13, 40, 97} : std::vector<int>{5, 13, 40, 97, 170, 600};
  for (int edge_labels : {1, 3, 7}) {
    std::vector<LabeledGraph> gs;
    for (int n : sizes) {
      testing::LabeledGraphOptions go;
      go.n = n;
      go.edge_prob = n == 600 ? 0.1 : 0.85;
      go.edge_labels = edge_labels;
      gs.push_back(testing::random_labeled_graph(go, rng));
    }
    Options o;
    o.q = 0.2;
    o.node_kernel = BaseKernel::KroneckerDelta(0.4);
    o.edge_kernel = BaseKernel::KroneckerDelta(0.3);
    o.dtype = DType::f64;
    const auto cpu = MarginalizedGraphKernel(o).gram(gs);
    for (DType dt : {DType::f64, DType::f32}) {
      o.dtype = dt;
      o.device = Device{DeviceKind::cuda, 0};
      const auto gpu = MarginalizedGraphKernel(o).gram(gs);
      EXPECT_TRUE(gpu.stats.failed.empty());
      EXPECT_GT(gpu.stats.matvec_flops_executed, 0);
      expect_close(gpu.K, cpu.K, dt == DType::f64 ? 1e-9 : 1e-5,
                   (std::string(dtype_name(dt)) + " labels " + std::to_string(edge_labels)).c_str());
      o.device = Device{};
    }
  }
}

// The large-pair sandwich mat-vec (Z_l = X Bt_l^T, then Y = sum_l A_l Z_l) against the direct
// tile-pair mat-vec, both forced by TESSERA_MGK_SANDWICH: banded graphs (dense octiles) of one and
// two edge labels with isolated nodes and sizes not multiples of 8, a sparse random graph, and
// tiles of 5 labels (not split into planes: the sandwich must decline). fp64, and fp32 on the
// tensor cores (three tf32 terms) and on the FFMA stages.
TEST(GraphKernelCuda, SandwichMatvecMatchesDirectPath) {
  TESSERA_REQUIRE_CUDA();
  std::mt19937_64 rng(testing::seed());
  auto banded = [&](int n, int band, int labels) {
    std::map<std::pair<int, int>, std::pair<float, int>> e;
    std::uniform_real_distribution<float> w(0.5f, 1.0f);
    for (int i = 0; i < n; ++i) {
      if (i % 97 == 13) continue;  // isolated nodes (and their band neighbours lose an edge)
      for (int j = i + 1; j <= std::min(n - 1, i + band); ++j)
        if (j % 97 != 13) e[{i, j}] = {w(rng), int(rng() % uint64_t(labels))};
    }
    std::vector<int32_t> nl(static_cast<size_t>(n));
    for (auto& l : nl) l = int32_t(rng() % 3);
    return testing::make_labeled_graph(n, e, nl, Dense<float>(n, 0), true, true);
  };
  struct Case {
    const char* name;
    std::vector<LabeledGraph> gs;
  };
  std::vector<Case> cases;
  cases.push_back({"banded, 1 label", {banded(523, 12, 1), banded(600, 9, 1)}});
  cases.push_back({"banded, 2 labels", {banded(531, 12, 2), banded(577, 5, 2)}});
  {
    testing::LabeledGraphOptions go;
    go.n = 611;
    go.edge_prob = 0.01;
    go.edge_labels = 2;
    go.attr_dim = 0;
    cases.push_back({"sparse random, 2 labels", {testing::random_labeled_graph(go, rng), banded(540, 12, 2)}});
  }
  cases.push_back({"5 labels (no planes)", {banded(530, 12, 5), banded(530, 12, 1)}});
  Options o;
  o.q = 0.1;
  o.node_kernel = BaseKernel::KroneckerDelta(0.4);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.3);
  o.device = Device{DeviceKind::cuda, 0};
  struct Env {
    ~Env() {
      ::unsetenv("TESSERA_MGK_SANDWICH");
      ::unsetenv("TESSERA_MGK_TF32");
    }
  } restore;
  for (const auto& c : cases) {
    ::setenv("TESSERA_MGK_SANDWICH", "0", 1);
    o.dtype = DType::f64;
    const auto direct = MarginalizedGraphKernel(o).gram(c.gs);
    ASSERT_TRUE(direct.stats.failed.empty()) << c.name;
    ASSERT_GT(direct.stats.matvec_kernel_seconds, 0) << c.name << ": the pairs should take the grid-wide path";
    ::setenv("TESSERA_MGK_SANDWICH", "1", 1);
    // fp32: the tensor-core stages (default) and the FFMA stages (TESSERA_MGK_TF32=0).
    for (const auto& [dt, tf32] : {std::pair{DType::f64, ""}, {DType::f32, ""}, {DType::f32, "0"}}) {
      o.dtype = dt;
      if (*tf32) ::setenv("TESSERA_MGK_TF32", tf32, 1);
      const auto gpu = MarginalizedGraphKernel(o).gram(c.gs);
      ::unsetenv("TESSERA_MGK_TF32");
      EXPECT_TRUE(gpu.stats.failed.empty()) << c.name;
      EXPECT_GT(gpu.stats.matvec_kernel_flops_executed, 0) << c.name;
      // On dense octiles the sandwich executes about a third of the direct path's arithmetic
      // (the sign that it ran); fp64 takes the same iterations on both paths.
      if (dt == DType::f64 && std::string(c.name).rfind("banded", 0) == 0) {
        EXPECT_LT(gpu.stats.matvec_kernel_flops_executed, 0.6 * direct.stats.matvec_kernel_flops_executed) << c.name;
      }
      expect_close(gpu.K, direct.K, dt == DType::f64 ? 1e-10 : 1e-5,
                   (std::string(c.name) + ", " + dtype_name(dt) + (*tf32 ? ", TESSERA_MGK_TF32=" : "") + tf32).c_str());
    }
  }
}

// The fp32 sandwich stage on tensor cores (octile_sandwich.cuh), one warp emulated on the CPU: the
// lanes load x and W at the kernel's offsets (mma_fragments.hpp sandwich_*), the hardware assembles
// A and B by the PTX tables, the accumulators are stored at the kernel's output offsets. Small
// integers first (exact: any slip in the layouts shows), then random floats through the kernel's
// three-term tf32 split (split_tf32: hi rounded to nearest, tf32_rna; lo = x - hi, truncated by the
// mma, tf32_rz): within 2^-19 of the exact products (the bound is 2.5 x 2^-21; fp32 multiply-adds:
// 2^-24 each).
TEST(MmaFragments, SandwichTf32x3WarpEmulationMatchesStage) {
  namespace mma = tessera::cuda::mma;
  namespace emu = tessera::testing::mma_emulation;
  std::mt19937_64 rng(testing::seed());
  for (const bool exact : {true, false}) {
    // Two row blocks of the input (rows 0-7, 8-15 of the m16 tile; row-major 8x8 inside) and a
    // W tile stored transposed (W[s][c] at c * 8 + s), as the stage reads them.
    float x[2][64], w[64];
    std::uniform_int_distribution<int> small(-8, 8);
    std::uniform_real_distribution<float> mant(1.0f, 2.0f);
    std::uniform_int_distribution<int> expo(-12, 12);
    auto draw = [&] { return exact ? float(small(rng)) : std::ldexp(mant(rng), expo(rng)) * (rng() % 2 ? 1.f : -1.f); };
    for (auto& b : x)
      for (float& v : b) v = draw();
    for (float& v : w) v = draw();
    // Registers as the kernel fills them: A elements 0..3 = (block 0, xo), (block 1, xo),
    // (block 0, xo + 1), (block 1, xo + 1); B elements at sandwich_w_offset.
    double areg[3][32][4], breg[3][32][2];  // [term][lane][element]: hi, lo, exact
    for (int l = 0; l < 32; ++l) {
      const int xo = mma::sandwich_x_offset(l);
      const float av[4] = {x[0][xo], x[1][xo], x[0][xo + 1], x[1][xo + 1]};
      for (int i = 0; i < 4; ++i) {
        areg[0][l][i] = emu::tf32_rna(av[i]);
        areg[1][l][i] = emu::tf32_rz(float(av[i] - areg[0][l][i]));
        areg[2][l][i] = av[i];
      }
      for (int i = 0; i < 2; ++i) {
        const float bv = w[mma::sandwich_w_offset(l, i)];
        breg[0][l][i] = emu::tf32_rna(bv);
        breg[1][l][i] = emu::tf32_rz(float(bv - breg[0][l][i]));
        breg[2][l][i] = bv;
      }
    }
    double A[3][16][8], B[3][8][8];
    for (int term = 0; term < 3; ++term) {
      ASSERT_TRUE(emu::gather_operand(areg[term], A[term], [](int l, int i) { return mma::k8_tf32_a(l, i); }))
          << "A fragment does not cover the m16 tile once";
      ASSERT_TRUE(emu::gather_operand(breg[term], B[term], [](int l, int i) { return mma::k8_tf32_b(l, i); }))
          << "B fragment does not cover the tile once";
    }
    // x_lo w_hi + x_hi w_lo + x_hi w_hi, as the kernel issues them; stored at the output offsets.
    double out[2][64] = {};
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < 4; ++i) {
        const mma::RowCol rc = mma::acc_c(l, i);
        double c = 0;
        for (int k = 0; k < 8; ++k)
          c += A[1][rc.row][k] * B[0][k][rc.col] + A[0][rc.row][k] * B[1][k][rc.col] + A[0][rc.row][k] * B[0][k][rc.col];
        out[rc.row >> 3][mma::sandwich_out_offset(l, i)] = c;
      }
    for (int row = 0; row < 16; ++row)
      for (int s = 0; s < 8; ++s) {
        double want = 0, mag = 0;
        for (int c = 0; c < 8; ++c) {
          want += double(x[row >> 3][(row & 7) * 8 + c]) * double(w[c * 8 + s]);
          mag += std::abs(double(x[row >> 3][(row & 7) * 8 + c]) * double(w[c * 8 + s]));
        }
        const double got = out[row >> 3][s * 8 + (row & 7)];
        if (exact) {
          ASSERT_EQ(got, want) << "row " << row << " column " << s;
        } else {
          EXPECT_LE(std::abs(got - want), std::ldexp(mag, -19)) << "row " << row << " column " << s;
        }
      }
  }
}

TEST(GraphKernelCuda, MutagGramMatchesCpu) {
  TESSERA_REQUIRE_CUDA();
  TESSERA_REQUIRE_SHARED("mutag");
  const auto col = io::read_tu(testing::shared_data("mutag"));
  Options o;
  o.node_kernel = BaseKernel::KroneckerDelta(0.5);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.5);
  const auto cpu = MarginalizedGraphKernel(o).gram(col.graphs);
  o.device = Device{DeviceKind::cuda, 0};
  const auto gpu = MarginalizedGraphKernel(o).gram(col.graphs);
  expect_close(gpu.K, cpu.K, 1e-10, "mutag f64");
  o.dtype = DType::f32;
  expect_close(MarginalizedGraphKernel(o).gram(col.graphs).K, cpu.K, 1e-5, "mutag f32");
}

}  // namespace
}  // namespace tessera::kernels
