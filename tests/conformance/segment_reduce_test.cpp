// Segment reduce (max/min/sum/mean): hand-checked tie/NaN/empty cases, every backend and every
// registered variant against the reference (exact args, values within the dtype's tolerance),
// backward against the reference, malformed input. GPU cases are named *Cuda*.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/testing.hpp"
#include "tessera/ops/segment_reduce.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace tessera {
namespace {

using ops::Reduce;
constexpr Reduce kAllReduce[] = {Reduce::sum, Reduce::mean, Reduce::max, Reduce::min};
constexpr DType kAllDtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// CSR from an edge list that KEEPS duplicates and the given (unsorted) order inside a row: the
// operator must not rely on sorted or unique columns.
template <class I>
Csr<I> raw_csr(const Coo<I>& coo) {
  Csr<I> g;
  g.rows = coo.rows;
  g.cols = coo.cols;
  std::vector<int64_t> cnt(size_t(coo.rows) + 1, 0);
  for (int64_t k = 0; k < coo.nnz(); ++k) ++cnt[size_t(coo.dst[k]) + 1];
  for (int64_t i = 0; i < coo.rows; ++i) cnt[i + 1] += cnt[i];
  g.rowptr.assign(cnt.begin(), cnt.end());
  for (auto& v : g.rowptr) v = I(int64_t(v));
  g.col.resize(size_t(coo.nnz()));
  std::vector<int64_t> fill(cnt.begin(), cnt.end() - 1);
  for (int64_t k = 0; k < coo.nnz(); ++k) g.col[size_t(fill[size_t(coo.dst[k])]++)] = coo.src[k];
  return g;
}

// Skewed graph: power-law-ish degrees with `heavy` rows of 600..3000 in-edges, one row of `huge`
// in-edges, 10% empty rows, duplicates; so every split quantile yields heavy rows.
template <class I>
Csr<I> skewed_graph(int64_t rows, int64_t cols, int heavy, int64_t huge, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<I> coo;
  coo.rows = rows;
  coo.cols = cols;
  std::uniform_int_distribution<int64_t> col(0, cols - 1);
  std::geometric_distribution<int> light(0.15);
  std::uniform_int_distribution<int> hv(600, 3000);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t d = (r % 10 == 7) ? 0 : light(rng);
    if (r < heavy) d = hv(rng);
    if (r == rows / 2 && huge > 0) d = huge;
    for (int64_t k = 0; k < d; ++k) {
      const int64_t c = col(rng);
      coo.dst.push_back(I(r));
      coo.src.push_back(I(c));
      if (k % 5 == 2) {  // duplicate edge
        coo.dst.push_back(I(r));
        coo.src.push_back(I(c));
      }
    }
  }
  return raw_csr(coo);
}

inline double to_double(float v) { return v; }
inline double to_double(double v) { return v; }
inline double to_double(half_t v) { return float(v); }
inline double to_double(bf16_t v) { return float(v); }
template <class T> T from_double(double v) { return T(float(v)); }
template <> double from_double<double>(double v) { return v; }

// A host matrix of any dtype with a padded leading dimension (rows are strided on purpose).
struct Mat {
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<unsigned char> bytes;
  Mat(DType t, int64_t r, int64_t c, int64_t pad = 0)
      : dtype(t), rows(r), cols(c), ld(c + pad), bytes(size_t(r) * size_t(c + pad) * dtype_size(t) + 8, 0) {}
  DenseView view() { return {bytes.data(), dtype, rows, cols, ld, Device{}}; }
  double get(int64_t i, int64_t j) const {
    return TESSERA_DISPATCH_FLOAT(dtype, T, [&] {
      T v;
      std::memcpy(&v, bytes.data() + (size_t(i) * size_t(ld) + size_t(j)) * sizeof(T), sizeof(T));
      return to_double(v);
    });
  }
  void set(int64_t i, int64_t j, double x) {
    TESSERA_DISPATCH_FLOAT(dtype, T, [&] {
      const T v = from_double<T>(x);
      std::memcpy(bytes.data() + (size_t(i) * size_t(ld) + size_t(j)) * sizeof(T), &v, sizeof(T));
    });
  }
};

// Features: small integers (many exact ties, sums exact in every accumulation type) or uniform
// reals; nan_share of entries set to NaN.
Mat random_features(DType t, int64_t rows, int64_t cols, uint64_t seed, bool integers, double nan_share = 0,
                    int64_t pad = 3) {
  Mat m(t, rows, cols, pad);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(-3, 3);
  std::uniform_real_distribution<double> real(-2, 2);
  std::bernoulli_distribution nan(nan_share);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m.set(i, j, nan_share > 0 && nan(rng) ? std::numeric_limits<double>::quiet_NaN()
                                            : (integers ? double(small(rng)) : real(rng)));
  return m;
}

double rel_tol(DType t) {
  switch (t) {
    case DType::f64: return 1e-12;
    case DType::f32: return 2e-6;
    case DType::f16: return 1e-3;   // output rounding: half has 11 significant bits
    case DType::bf16: return 8e-3;  // bfloat16 has 8
  }
  return 0;
}

// got vs want (the reference): NaN exactly where the reference has NaN; values within tolerance
// (accumulation error grows with the row's degree for sum/mean); args bit-exact.
template <class I>
void expect_match(const CsrView<I>& g, Reduce red, const Mat& want, const Mat& got,
                  const std::vector<int64_t>& want_arg, const std::vector<int64_t>& got_arg, const std::string& what,
                  const Mat* X = nullptr) {
  const double acc_eps = want.dtype == DType::f64 ? 1e-15 : 1.2e-7;
  const bool summed = red == Reduce::sum || red == Reduce::mean;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.rows && bad < 5; ++i) {
    const double deg = double(g.rowptr[i + 1] - g.rowptr[i]);
    for (int64_t f = 0; f < want.cols && bad < 5; ++f) {
      const double w = want.get(i, f), x = got.get(i, f);
      double tol = rel_tol(want.dtype) * std::fabs(w) + acc_eps * 4 * (deg + 1) * 4;
      if (X && summed && deg > 0) {
        // Real values with cancellation: the float accumulation error scales with sum |x_j|, not
        // with |result|; statistically like sqrt(degree) roundings (the SpMM conformance bound).
        double abs_sum = 0;
        for (auto k = g.rowptr[i]; k < g.rowptr[i + 1]; ++k) abs_sum += std::fabs(X->get(int64_t(g.col[k]), f));
        if (red == Reduce::mean) abs_sum /= deg;
        tol += acc_eps * (8 + std::sqrt(deg)) * abs_sum;
      }
      const bool ok = std::isnan(w) ? std::isnan(x) : (!std::isnan(x) && std::fabs(w - x) <= tol);
      if (!ok) {
        ADD_FAILURE() << what << ": Y[" << i << "," << f << "] = " << x << ", reference " << w;
        ++bad;
      }
      if (ops::has_arg(red) && want_arg[size_t(i * want.cols + f)] != got_arg[size_t(i * want.cols + f)]) {
        ADD_FAILURE() << what << ": arg[" << i << "," << f << "] = " << got_arg[size_t(i * want.cols + f)]
                      << ", reference " << want_arg[size_t(i * want.cols + f)] << " (value " << w << ")";
        ++bad;
      }
    }
  }
}

struct Forward {
  Mat Y;
  std::vector<int64_t> arg;
};
template <class I>
Forward run_forward(const CsrView<I>& g, Reduce red, Mat& X, const std::string& variant, const Exec& exec = {}) {
  Forward out{Mat(X.dtype, g.rows, X.cols, 1), std::vector<int64_t>(size_t(g.rows * X.cols), 12345)};
  // Poison Y so an unwritten element cannot pass.
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t f = 0; f < X.cols; ++f) out.Y.set(i, f, std::numeric_limits<double>::quiet_NaN());
  ops::SegmentReduceArgs<I> a{g, red, X.view(), out.Y.view(), ops::has_arg(red) ? out.arg.data() : nullptr};
  ops::segment_reduce(a, exec, variant);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Hand-checked: 4 targets over 5 sources, F = 2.
//   row 0: sources 3, 1, 4, 1 (duplicate 1, unsorted); row 1: empty; row 2: source 2 only;
//   row 3: sources 4, 0, 2.
//   X (source x feature): 0:[5, -1] 1:[2, 7] 2:[9, NaN] 3:[2, 7] 4:[-8, 7]
TEST(SegmentReduce, HandCheckedTiesEmptyRowsAndNaN) {
  Csr<int32_t> g;
  g.rows = 4;
  g.cols = 5;
  g.rowptr = {0, 4, 4, 5, 8};
  g.col = {3, 1, 4, 1, 2, 4, 0, 2};
  Mat X(DType::f32, 5, 2);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double xs[5][2] = {{5, -1}, {2, 7}, {9, nan}, {2, 7}, {-8, 7}};
  for (int j = 0; j < 5; ++j)
    for (int f = 0; f < 2; ++f) X.set(j, f, xs[j][f]);
  for (const std::string backend : {"reference", "cpu"}) {
    auto mx = run_forward(g.view(), Reduce::max, X, backend);
    // row 0 f0: values 2 (j=3), 2 (j=1), -8, 2 (j=1): max 2, smallest source 1 (not the first edge).
    EXPECT_EQ(mx.Y.get(0, 0), 2);
    EXPECT_EQ(mx.arg[0], 1) << backend;
    // row 0 f1: 7 at j = 3, 1, 4, 1 -> 7 at j = 1.
    EXPECT_EQ(mx.Y.get(0, 1), 7);
    EXPECT_EQ(mx.arg[1], 1) << backend;
    // row 1 empty: 0 and -1.
    EXPECT_EQ(mx.Y.get(1, 0), 0);
    EXPECT_EQ(mx.arg[2], -1) << backend;
    EXPECT_EQ(mx.arg[3], -1) << backend;
    // row 3 f1: 7 (j=4), -1 (j=0), NaN (j=2) -> NaN wins, arg 2.
    EXPECT_TRUE(std::isnan(mx.Y.get(3, 1))) << backend;
    EXPECT_EQ(mx.arg[7], 2) << backend;
    auto mn = run_forward(g.view(), Reduce::min, X, backend);
    EXPECT_EQ(mn.Y.get(0, 0), -8);
    EXPECT_EQ(mn.arg[0], 4) << backend;
    EXPECT_EQ(mn.Y.get(3, 0), -8);
    EXPECT_EQ(mn.arg[6], 4) << backend;
    EXPECT_TRUE(std::isnan(mn.Y.get(3, 1))) << backend;  // NaN is the extreme for min as well
    EXPECT_EQ(mn.arg[7], 2) << backend;
    auto sm = run_forward(g.view(), Reduce::sum, X, backend);
    EXPECT_EQ(sm.Y.get(0, 0), 2 + 2 - 8 + 2);  // the duplicate counts twice
    EXPECT_EQ(sm.Y.get(1, 1), 0);
    EXPECT_TRUE(std::isnan(sm.Y.get(3, 1)));
    auto me = run_forward(g.view(), Reduce::mean, X, backend);
    EXPECT_EQ(me.Y.get(0, 1), 7);
    EXPECT_EQ(me.Y.get(3, 0), (-8 + 5 + 9) / 3.0);
    EXPECT_EQ(me.Y.get(1, 0), 0);
  }
}

// Backward by hand on the same graph: max routes dY to the winner only.
TEST(SegmentReduce, HandCheckedBackward) {
  Csr<int64_t> g;
  g.rows = 2;
  g.cols = 3;
  g.rowptr = {0, 3, 5};
  g.col = {2, 0, 2, 1, 1};
  Mat dY(DType::f64, 2, 1);
  dY.set(0, 0, 10);
  dY.set(1, 0, 1);
  for (const std::string backend : {"reference", "cpu"}) {
    Mat dX(DType::f64, 3, 1, 2);
    const std::vector<int64_t> arg = {0, 1};
    ops::segment_reduce_backward<int64_t>({g.view(), Reduce::max, dY.view(), arg.data(), dX.view()}, {}, backend);
    EXPECT_EQ(dX.get(0, 0), 10);
    EXPECT_EQ(dX.get(1, 0), 1);
    EXPECT_EQ(dX.get(2, 0), 0);
    ops::segment_reduce_backward<int64_t>({g.view(), Reduce::mean, dY.view(), nullptr, dX.view()}, {}, backend);
    EXPECT_DOUBLE_EQ(dX.get(0, 0), 10 / 3.0);
    EXPECT_DOUBLE_EQ(dX.get(1, 0), 2 * 0.5);
    EXPECT_DOUBLE_EQ(dX.get(2, 0), 2 * 10 / 3.0);
    ops::segment_reduce_backward<int64_t>({g.view(), Reduce::sum, dY.view(), nullptr, dX.view()}, {}, backend);
    EXPECT_EQ(dX.get(2, 0), 20);
    EXPECT_EQ(dX.get(1, 0), 2);
  }
}

TEST(SegmentReduce, HeavyThresholdIsAQuantileAndAtLeastTwoChunks) {
  std::vector<int64_t> deg(1000);
  std::iota(deg.begin(), deg.end(), 0);
  EXPECT_EQ(ops::heavy_degree_threshold(deg.data(), 1000, 0.99, 1), 990);
  EXPECT_EQ(ops::heavy_degree_threshold(deg.data(), 1000, 0.99, 1024), 2048);
  EXPECT_EQ(ops::heavy_degree_threshold(deg.data(), 1000, 0.0, 1), std::numeric_limits<int64_t>::max());
}

// Every host variant x dtype x index type x reduction, on a nasty graph with ties and NaNs.
template <class I>
void host_conformance(uint64_t salt, bool sort_rows) {
  testing::NastyOptions o;
  o.rows = 613;
  o.cols = 577;
  o.avg_degree = 9;
  o.huge_row_degree = 3000;
  auto g = raw_csr(testing::nasty_coo<I>(o, testing::seed(salt)));
  // Sorted rows (duplicates kept), as CSR builders emit them, next to the unsorted order: the tie
  // rule must not depend on the order. Integer features make ties common in both.
  if (sort_rows)
    for (int64_t i = 0; i < g.rows; ++i)
      std::sort(g.col.begin() + int64_t(g.rowptr[i]), g.col.begin() + int64_t(g.rowptr[i + 1]));
  for (DType t : kAllDtypes)
    for (int64_t F : {1, 37, 130})
      for (double nan_share : {0.0, 0.01}) {
        Mat X = random_features(t, g.cols, F, testing::seed(salt + F), /*integers=*/true, nan_share);
        for (Reduce red : kAllReduce) {
          auto want = run_forward(g.view(), red, X, "reference");
          for (const auto& v : ops::segment_reduce_registry<I>().all()) {
            if (v.backend == tune::Backend::cuda || v.name == "reference") continue;
            auto got = run_forward(g.view(), red, X, v.name);
            expect_match(g.view(), red, want.Y, got.Y, want.arg, got.arg,
                         v.name + " " + ops::reduce_name(red) + " " + dtype_name(t) + " " + index_name(index_of<I>::value) +
                             " F=" + std::to_string(F) + " seed " + std::to_string(testing::seed(salt)));
          }
        }
      }
}
TEST(SegmentReduceConformance, HostVariantsInt32) { host_conformance<int32_t>(1, false); }
TEST(SegmentReduceConformance, HostVariantsInt64) { host_conformance<int64_t>(2, false); }
TEST(SegmentReduceConformance, HostVariantsSortedRowsInt32) { host_conformance<int32_t>(11, true); }
TEST(SegmentReduceConformance, HostVariantsSortedRowsInt64) { host_conformance<int64_t>(12, true); }

// Real-valued features (no exact sums) and a row of 10^5 in-edges.
TEST(SegmentReduceConformance, HugeRowRealValues) {
  auto g = skewed_graph<int64_t>(2000, 5000, 20, 120000, testing::seed(3));
  for (DType t : {DType::f32, DType::bf16}) {
    Mat X = random_features(t, g.cols, 67, testing::seed(4), /*integers=*/false);
    for (Reduce red : kAllReduce) {
      auto want = run_forward(g.view(), red, X, "reference");
      auto got = run_forward(g.view(), red, X, "cpu");
      expect_match(g.view(), red, want.Y, got.Y, want.arg, got.arg,
                   std::string("cpu huge row ") + ops::reduce_name(red) + " " + dtype_name(t), &X);
    }
  }
}

// Backward (CPU) against the reference for every reduction; the arg comes from the forward.
TEST(SegmentReduceConformance, HostBackward) {
  for (DType t : kAllDtypes) {
    auto g = skewed_graph<int32_t>(700, 650, 3, 5000, testing::seed(5));
    const int64_t F = 45;
    Mat X = random_features(t, g.cols, F, testing::seed(6), true);
    Mat dY = random_features(t, g.rows, F, testing::seed(7), false);
    for (Reduce red : kAllReduce) {
      auto fw = run_forward(g.view(), red, X, "reference");
      Mat want(t, g.cols, F, 2), got(t, g.cols, F, 1);
      ops::segment_reduce_backward<int32_t>({g.view(), red, dY.view(), fw.arg.data(), want.view()}, {}, "reference");
      ops::segment_reduce_backward<int32_t>({g.view(), red, dY.view(), fw.arg.data(), got.view()}, {}, "cpu");
      int64_t bad = 0;
      for (int64_t j = 0; j < g.cols && bad < 5; ++j)
        for (int64_t f = 0; f < F && bad < 5; ++f) {
          const double w = want.get(j, f), x = got.get(j, f);
          const double tol = rel_tol(t) * std::fabs(w) + (t == DType::f64 ? 1e-12 : 1e-4);
          if (!(std::fabs(w - x) <= tol)) {
            ADD_FAILURE() << "backward " << ops::reduce_name(red) << " " << dtype_name(t) << " dX[" << j << "," << f
                          << "] = " << x << ", reference " << w;
            ++bad;
          }
        }
    }
  }
}

// ---- malformed input ------------------------------------------------------------------------
TEST(SegmentReduce, RejectsBadInputNamingTheProblem) {
  Csr<int32_t> g;
  g.rows = 2;
  g.cols = 3;
  g.rowptr = {0, 2, 3};
  g.col = {0, 2, 1};
  Mat X(DType::f32, 3, 4), Y(DType::f32, 2, 4), Ybad(DType::f32, 3, 4), Yh(DType::f16, 2, 4);
  std::vector<int64_t> arg(8);
  auto expect_error = [](auto&& fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  using Args = ops::SegmentReduceArgs<int32_t>;
  expect_error([&] { ops::segment_reduce(Args{g.view(), Reduce::max, X.view(), Ybad.view(), arg.data()}, {}); },
               "Y has 3 rows");
  expect_error([&] { ops::segment_reduce(Args{g.view(), Reduce::max, X.view(), Yh.view(), arg.data()}, {}); },
               "float16");
  expect_error([&] { ops::segment_reduce(Args{g.view(), Reduce::sum, X.view(), Y.view()}, {}, "cuda.nope"); },
               "unknown variant");
  auto bad_col = g;
  bad_col.col[1] = 3;
  expect_error([&] { ops::segment_reduce(Args{bad_col.view(), Reduce::sum, X.view(), Y.view()}, {}); },
               "entry 1: column 3 out of range");
  auto bad_ptr = g;
  bad_ptr.rowptr = {0, 3, 2};
  expect_error([&] { ops::segment_reduce(Args{bad_ptr.view(), Reduce::sum, X.view(), Y.view()}, {}); },
               "non-monotone offsets at row 1");
  Mat dX(DType::f32, 3, 4);
  expect_error(
      [&] {
        ops::segment_reduce_backward<int32_t>({g.view(), Reduce::min, Y.view(), nullptr, dX.view()}, {});
      },
      "needs the forward's arg");
  expect_error([] { ops::parse_reduce("prod"); }, "unknown reduction 'prod'");
}

// ---- CUDA: every registered cuda variant against the reference ------------------------------
#ifdef TESSERA_WITH_CUDA
struct DeviceBytes {
  void* p = nullptr;
  size_t n = 0;
  explicit DeviceBytes(size_t bytes) : n(bytes) {
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) throw Error("cudaMalloc failed");
  }
  ~DeviceBytes() { cudaFree(p); }
  template <class T> static DeviceBytes of(const std::vector<T>& v) {
    DeviceBytes d(v.size() * sizeof(T));
    if (!v.empty()) cudaMemcpy(d.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
    return d;
  }
};
template <class I>
struct DeviceGraph {
  DeviceBytes rowptr, col;
  CsrView<I> view;
  explicit DeviceGraph(const Csr<I>& g) : rowptr(DeviceBytes::of(g.rowptr)), col(DeviceBytes::of(g.col)) {
    view = g.view();
    view.rowptr = static_cast<const I*>(rowptr.p);
    view.col = static_cast<const I*>(col.p);
    view.values = nullptr;
    view.device = Device{DeviceKind::cuda, 0};
  }
};
DenseView on_device(DeviceBytes& d, const Mat& m) {
  cudaMemcpy(d.p, m.bytes.data(), m.bytes.size(), cudaMemcpyHostToDevice);
  return {d.p, m.dtype, m.rows, m.cols, m.ld, Device{DeviceKind::cuda, 0}};
}

template <class I>
void cuda_conformance(const Csr<I>& g, const std::vector<DType>& dtypes, const std::vector<int64_t>& widths,
                      bool integers, double nan_share, uint64_t salt) {
  DeviceGraph<I> dg(g);
  const Exec exec{Device{DeviceKind::cuda, 0}};
  for (DType t : dtypes)
    for (int64_t F : widths) {
      Mat X = random_features(t, g.cols, F, testing::seed(salt + F), integers, nan_share);
      DeviceBytes dX(X.bytes.size());
      const DenseView Xd = on_device(dX, X);
      for (Reduce red : kAllReduce) {
        auto want = run_forward(g.view(), red, X, "reference");
        ops::SegmentReduceArgs<I> probe{dg.view, red, Xd, {}, nullptr};
        for (const auto& v : ops::segment_reduce_registry<I>().all()) {
          if (v.backend != tune::Backend::cuda) continue;
          probe.Y = Xd;  // eligibility reads reduce/dtype/graph only
          if (v.eligible && !v.eligible(probe)) continue;
          Mat Y(t, g.rows, F, 1);
          DeviceBytes dY(Y.bytes.size());
          cudaMemset(dY.p, 0xff, Y.bytes.size());  // NaN-poisoned
          DeviceBytes darg(size_t(g.rows * F) * 8);
          ops::SegmentReduceArgs<I> a{dg.view, red, Xd, {dY.p, t, g.rows, F, Y.ld, exec.device},
                                      ops::has_arg(red) ? static_cast<int64_t*>(darg.p) : nullptr};
          ops::segment_reduce(a, exec, v.name);
          ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
          cudaMemcpy(Y.bytes.data(), dY.p, Y.bytes.size(), cudaMemcpyDeviceToHost);
          std::vector<int64_t> arg(size_t(g.rows * F), 0);
          if (ops::has_arg(red)) cudaMemcpy(arg.data(), darg.p, arg.size() * 8, cudaMemcpyDeviceToHost);
          expect_match(g.view(), red, want.Y, Y, want.arg, arg,
                       v.name + " " + ops::reduce_name(red) + " " + dtype_name(t) + " F=" + std::to_string(F) +
                           " seed " + std::to_string(testing::seed(salt)));
        }
      }
    }
}

TEST(SegmentReduceCuda, AllVariantsNastyGraphTiesAndNaN) {
  TESSERA_REQUIRE_CUDA();
  testing::NastyOptions o;
  o.rows = 3001;
  o.cols = 2999;
  o.huge_row_degree = 4000;
  auto g = raw_csr(testing::nasty_coo<int32_t>(o, testing::seed(11)));
  cuda_conformance(g, {DType::f32, DType::f64, DType::f16, DType::bf16}, {1, 33, 130}, true, 0.0, 12);
  cuda_conformance(g, {DType::f32, DType::bf16}, {64}, true, 0.02, 13);
}
TEST(SegmentReduceCuda, AllVariantsSkewedGraphEveryThresholdInt64) {
  TESSERA_REQUIRE_CUDA();
  // 40 rows of 600..3000 edges and one of 1.2e5: heavy rows at q0.99, q0.999 and every chunk size.
  auto g = skewed_graph<int64_t>(5000, 7000, 40, 120000, testing::seed(14));
  cuda_conformance(g, {DType::f32, DType::f16}, {64, 257}, true, 0.0, 15);
  cuda_conformance(g, {DType::f32}, {96}, false, 0.001, 16);
}

TEST(SegmentReduceCuda, BackwardMatchesReference) {
  TESSERA_REQUIRE_CUDA();
  auto g = skewed_graph<int32_t>(3000, 2500, 10, 20000, testing::seed(17));
  DeviceGraph<int32_t> dg(g);
  const Exec exec{Device{DeviceKind::cuda, 0}};
  for (DType t : kAllDtypes) {
    const int64_t F = 70;
    Mat X = random_features(t, g.cols, F, testing::seed(18), true);
    Mat dY = random_features(t, g.rows, F, testing::seed(19), false);
    DeviceBytes dYd(dY.bytes.size());
    const DenseView dYv = on_device(dYd, dY);
    for (Reduce red : kAllReduce) {
      auto fw = run_forward(g.view(), red, X, "reference");
      DeviceBytes darg = DeviceBytes::of(fw.arg);
      Mat want(t, g.cols, F, 2), got(t, g.cols, F, 2);
      ops::segment_reduce_backward<int32_t>({g.view(), red, dY.view(), fw.arg.data(), want.view()}, {}, "reference");
      DeviceBytes dXd(got.bytes.size());
      ops::segment_reduce_backward<int32_t>(
          {dg.view, red, dYv, static_cast<const int64_t*>(darg.p), {dXd.p, t, g.cols, F, got.ld, exec.device}}, exec);
      ASSERT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
      cudaMemcpy(got.bytes.data(), dXd.p, got.bytes.size(), cudaMemcpyDeviceToHost);
      int64_t bad = 0;
      for (int64_t j = 0; j < g.cols && bad < 5; ++j)
        for (int64_t f = 0; f < F && bad < 5; ++f) {
          const double w = want.get(j, f), x = got.get(j, f);
          if (!(std::fabs(w - x) <= rel_tol(t) * std::fabs(w) + (t == DType::f64 ? 1e-10 : 1e-3))) {
            ADD_FAILURE() << "cuda backward " << ops::reduce_name(red) << " " << dtype_name(t) << " dX[" << j << ","
                          << f << "] = " << x << ", reference " << w;
            ++bad;
          }
        }
    }
  }
}
#endif

}  // namespace
}  // namespace tessera
