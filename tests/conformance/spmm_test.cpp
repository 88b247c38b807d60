// SpMM family conformance: every registered variant that runs on this machine against the
// reference backend, on fresh seeded inputs (R-MAT power law, empty rows, one row with 1e5
// in-edges, duplicate edges kept, widths that are not multiples of 4/8/32, int32 and int64
// indices, strided X and Y, all four dtypes, three weight sources). Outputs are poisoned with NaN
// before each run; NaN never passes; the padding of a strided Y must stay untouched.
// CUDA variants run in the *Cuda* tests on the GPU machine.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/spmm/variants.hpp"
#include "conformance/spmm_support.hpp"
#include "support/testing.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/ops/spmm.hpp"

using namespace tessera;
using namespace tessera::ops;
using namespace tessera::testing;

namespace {

// --- graph cases -------------------------------------------------------------------------------
template <class I>
Csr<I> rmat_case(uint64_t s) {
  Coo<int64_t> c = gen::rmat(11, 8, s);
  Coo<I> coo;
  coo.rows = c.rows, coo.cols = c.cols;
  coo.src.assign(c.src.begin(), c.src.end());
  coo.dst.assign(c.dst.begin(), c.dst.end());
  BuildOptions o;
  o.deduplicate = false;  // R-MAT repeats edges: keep them
  return build_csr(coo, o);
}

template <class I>
std::vector<std::pair<std::string, Csr<I>>> graph_cases(uint64_t s) {
  std::vector<std::pair<std::string, Csr<I>>> out;
  BuildOptions keep;
  keep.deduplicate = false;
  out.emplace_back("rmat", rmat_case<I>(s));
  NastyOptions nasty;
  nasty.rows = 997, nasty.cols = 611;  // rectangular, not a multiple of any tile
  out.emplace_back("nasty", build_csr(nasty_coo<I>(nasty, s + 1), keep));
  NastyOptions huge;
  huge.rows = 77, huge.cols = 3001, huge.huge_row_degree = 100000, huge.weighted = false;
  out.emplace_back("huge_row", build_csr(nasty_coo<I>(huge, s + 2), keep));
  // Rows on both sides of every long-row boundary of the CUDA row kernels (32 on graphs of at most
  // 65536 rows, 128 on larger ones: block per row; 2048: chunks with atomics), mixed with short
  // and empty rows; the large graph's rows beyond the first few have 0-3 edges.
  std::mt19937_64 rng(s + 3);
  const int64_t degrees[] = {31, 32, 33, 127, 128, 129, 200, 1000, 2047, 2048, 2049, 5000};
  for (const int64_t rows : {int64_t(64), int64_t(65537)}) {
    Coo<I> lengths;
    lengths.rows = rows, lengths.cols = 5003;
    for (int64_t r = 0; r < lengths.rows; ++r) {
      const int64_t d = r < 12 ? degrees[r] : int64_t(rng() % (rows > 64 ? 4 : 40));
      for (int64_t k = 0; k < d; ++k) {
        lengths.src.push_back(I(rng() % uint64_t(lengths.cols)));
        lengths.dst.push_back(I(r));
      }
    }
    out.emplace_back(rows > 64 ? "row_lengths_large_graph" : "row_lengths", build_csr(lengths, keep));
  }
  // More medium rows (129..2048 edges) than the CUDA block-per-row path takes (1024): they go to
  // the chunked path instead.
  Coo<I> medium;
  medium.rows = 1100, medium.cols = 997;
  for (int64_t r = 0; r < medium.rows; ++r)
    for (int64_t k = 0, d = 129 + int64_t(rng() % 64); k < d; ++k) {
      medium.src.push_back(I(rng() % uint64_t(medium.cols)));
      medium.dst.push_back(I(r));
    }
  out.emplace_back("many_medium_rows", build_csr(medium, keep));
  // The long-row threshold is relative on dense graphs: max(32, 4 x ceil(mean degree)) on a graph
  // this small. Here 253 rows of 96 edges and rows of 399, 400 and 401 edges make the mean
  // 99.6 -> 100, so the threshold is 400: the row pass keeps 399 and 400 and hands 401 on.
  Coo<I> dense;
  dense.rows = 256, dense.cols = 1009;
  for (int64_t r = 0; r < dense.rows; ++r)
    for (int64_t k = 0, d = r < 3 ? 399 + r : 96; k < d; ++k) {
      dense.src.push_back(I(rng() % uint64_t(dense.cols)));
      dense.dst.push_back(I(r));
    }
  out.emplace_back("relative_long_row", build_csr(dense, keep));
  return out;
}

const std::vector<int64_t> kAllWidths = {1, 3, 5, 17, 33, 64, 100, 130};
const std::vector<DType> kAllDtypes = {DType::f32, DType::f64, DType::f16, DType::bf16};
// Under the sanitizer (small_run) a subset that still has a scalar, a narrow and a multi-tile width.
std::vector<int64_t> widths() { return small_run() ? std::vector<int64_t>{5, 64, 130} : kAllWidths; }
std::vector<DType> dtypes() { return small_run() ? std::vector<DType>{DType::f32, DType::f16} : kAllDtypes; }

enum class Weights { graph, explicit_values, ones };

// Runs every variant in `names` on one case and compares with the reference.
template <class I>
// offset (CUDA only): the device X and Y start that many bytes past an aligned allocation
// (a whole number of elements), as a tensor slice would.
// with_bias: a random bias [F] (accumulation type) is added to every row (SpmmArgs::bias).
void check_case(const Csr<I>& g, const std::string& what, DType dt, int64_t F, bool strided, Weights wsrc,
                bool with_bias, uint64_t s, bool cuda, const std::vector<std::string>& names, size_t offset = 0) {
  std::mt19937_64 rng(s);
  const int64_t pad_x = strided ? 3 : 0, pad_y = strided ? 5 : 0;
  HostMatrix X(dt, g.cols, F, F + pad_x), Yref(dt, g.rows, F, F + pad_y);
  X.fill_random(rng);
  Csr<I> gw = g;
  if (wsrc == Weights::ones) {
    gw.values.clear();
    gw.touch();  // different contents: a new identity for the per-graph caches
  }
  std::vector<float> wf;
  std::vector<double> wd;
  if (wsrc == Weights::explicit_values) {
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    for (int64_t k = 0; k < g.nnz(); ++k) wd.push_back(u(rng)), wf.push_back(float(wd.back()));
    if (dt != DType::f64)
      for (size_t k = 0; k < wd.size(); ++k) wd[k] = wf[k];  // the float weights are exact in double
  }
  const void* host_values = wsrc != Weights::explicit_values ? nullptr
                            : dt == DType::f64 ? static_cast<const void*>(wd.data())
                                               : static_cast<const void*>(wf.data());

  std::vector<float> bf;
  std::vector<double> bd;
  if (with_bias) {
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (int64_t f = 0; f < F; ++f) bf.push_back(float(u(rng))), bd.push_back(bf.back());
  }
  const void* host_bias = !with_bias ? nullptr : dt == DType::f64 ? static_cast<const void*>(bd.data())
                                                                  : static_cast<const void*>(bf.data());
  const size_t bias_bytes = with_bias ? size_t(F) * (dt == DType::f64 ? 8 : 4) : 0;

  SpmmArgs<I> ref{gw.view(), host_values, X.view(), Yref.view(), host_bias};
  Yref.poison();
  reference::spmm(ref);
  const std::vector<double> bound = error_bound(gw.view(), host_values, X, dt, 0, bd);

  for (const auto& name : names) {
    if (name == "reference") continue;
    HostMatrix Y(dt, g.rows, F, F + pad_y);
    Y.poison();
    const std::string ctx = what + " variant=" + name + " dtype=" + dtype_name(dt) + " index=" +
                            index_name(index_of<I>::value) + " F=" + std::to_string(F) +
                            (strided ? " strided" : "") + " ldx=" + std::to_string(X.ld()) +
                            " ldy=" + std::to_string(Y.ld()) + " offset_bytes=" + std::to_string(offset) +
                            " weights=" + std::to_string(int(wsrc)) + (with_bias ? " bias" : "") +
                            " graph_rows=" + std::to_string(g.rows) +
                            " nnz=" + std::to_string(g.nnz()) + " seed=" + std::to_string(s);
    if (!cuda) {
      SpmmArgs<I> a{gw.view(), host_values, X.view(), Y.view(), host_bias};
      if (!spmm_registry<I>().is_eligible(spmm_registry<I>().get(name), a, Device{})) continue;
      spmm(a, Exec::cpu(), name);
    } else {
#ifdef TESSERA_WITH_CUDA
      // Every CUDA call is checked per variant: a fault is reported with this variant's context
      // and ends the test (the context is unusable after a sticky error).
      std::string fault;
      try {
        DeviceGraph<I> dg(gw);
        DeviceCopy dX(X, offset), dY(Y, offset),
            dv(host_values, wsrc == Weights::explicit_values ? size_t(g.nnz()) * (dt == DType::f64 ? 8 : 4) : 0),
            db(host_bias, bias_bytes);
        SpmmArgs<I> a{dg.view(), dv.ptr, dX.view(X), dY.view(Y), db.ptr};
        Exec ex;
        ex.device = Device{DeviceKind::cuda, 0};
        if (!spmm_registry<I>().is_eligible(spmm_registry<I>().get(name), a, ex.device)) continue;
        fault = cuda_fault_after(ex);  // a fault from before this variant would be misattributed
        if (!fault.empty()) {
          ADD_FAILURE() << "CUDA error before running " << ctx << ": " << fault;
          return;
        }
        spmm(a, ex, name);
        fault = cuda_fault_after(ex);
        if (fault.empty()) dY.copy_back(Y, ex);
      } catch (const std::exception& e) {
        fault = std::string("exception: ") + e.what();
      }
      if (!fault.empty()) {
        ADD_FAILURE() << "CUDA variant failed: " << ctx << ": " << fault;
        return;
      }
#endif
    }
    if (const double op = operand_rel_error(name); op > 0)
      expect_close(Y, Yref, error_bound(gw.view(), host_values, X, dt, op, bd), dt, ctx);
    else
      expect_close(Y, Yref, bound, dt, ctx);
  }
}

template <class I>
void run_conformance(bool cuda) {
  const uint64_t s = seed(sizeof(I));
  std::vector<std::string> names;
  for (const auto& v : spmm_registry<I>().all())
    if (v.backend == (cuda ? tune::Backend::cuda : tune::Backend::cpu)) names.push_back(v.name);
  ASSERT_FALSE(names.empty());
  int combo = 0;
  for (const auto& [what, g] : graph_cases<I>(s))
    for (DType dt : dtypes())
      for (int64_t F : widths()) {
        ++combo;
        const bool strided = combo % 3 == 0;
        const Weights w = Weights(combo % 3);
        // Every 4th CUDA combo starts X and Y one element past an aligned address (a slice).
        const size_t offset = cuda && combo % 4 == 1 ? dtype_size(dt) : 0;
        // Bias on every other combo (so each weight source and stride meets both).
        check_case(g, what, dt, F, strided, w, combo % 2 == 0, s + uint64_t(combo), cuda, names, offset);
        if (::testing::Test::HasFailure()) return;  // one clear failure, not thousands
      }
}

}  // namespace

TEST(SpmmConformance, CpuVariantsMatchReferenceInt32) { run_conformance<int32_t>(false); }
TEST(SpmmConformance, CpuVariantsMatchReferenceInt64) { run_conformance<int64_t>(false); }

TEST(SpmmConformance, CudaVariantsMatchReferenceInt32) {
  TESSERA_REQUIRE_CUDA();
  run_conformance<int32_t>(true);
}
TEST(SpmmConformance, CudaVariantsMatchReferenceInt64) {
  TESSERA_REQUIRE_CUDA();
  run_conformance<int64_t>(true);
}

// Every registered variant is a conformance case: a CPU build knows reference + cpu.rows, a CUDA
// build also the cuda.* entries.
TEST(SpmmConformance, RegistryListsTheBackends) {
  std::vector<std::string> names;
  for (const auto& v : spmm_registry<int32_t>().all()) names.push_back(v.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "reference"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu.rows"), names.end());
#ifdef TESSERA_WITH_CUDA
  for (const char* n : {"cuda.cusparse", "cuda.csr.warp_row", "cuda.csr.feature_parallel"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
#endif
}

// --- SDDMM (edge-weight gradient) ------------------------------------------------------------
template <class I>
void run_sddmm(bool cuda) {
  const uint64_t s = seed(7 + sizeof(I));
  int combo = 0;
  for (const auto& [what, g] : graph_cases<I>(s))
    for (DType dt : dtypes())
      for (int64_t F : {int64_t(1), int64_t(5), int64_t(33), int64_t(64), int64_t(130)}) {
        std::mt19937_64 rng(s + uint64_t(++combo));
        const bool strided = combo % 2 == 0;
        HostMatrix X(dt, g.cols, F, F + (strided ? 4 : 0)), dY(dt, g.rows, F, F + (strided ? 2 : 0));
        X.fill_random(rng);
        dY.fill_random(rng);
        const size_t ws = dt == DType::f64 ? 8 : 4;
        std::vector<unsigned char> ref(size_t(g.nnz()) * ws), got(ref.size());
        reference::sddmm(SddmmArgs<I>{g.view(), dY.view(), X.view(), ref.data()});
        std::memset(got.data(), 0xff, got.size());  // NaN pattern in both float and double
        if (!cuda) {
          sddmm(SddmmArgs<I>{g.view(), dY.view(), X.view(), got.data()}, Exec::cpu());
        } else {
#ifdef TESSERA_WITH_CUDA
          const size_t offset = combo % 3 == 1 ? dtype_size(dt) : 0;  // sliced X/dY now and then
          std::string fault;
          try {
            DeviceGraph<I> dg(g);
            DeviceCopy dX(X, offset), ddY(dY, offset), ddw(got.data(), got.size());
            Exec ex;
            ex.device = Device{DeviceKind::cuda, 0};
            sddmm(SddmmArgs<I>{dg.view(), ddY.view(dY), dX.view(X), ddw.ptr}, ex);
            fault = cuda_fault_after(ex);
            if (fault.empty()) ddw.copy_back(got.data(), got.size(), ex);
          } catch (const std::exception& e) {
            fault = std::string("exception: ") + e.what();
          }
          if (!fault.empty()) {
            ADD_FAILURE() << "CUDA sddmm failed: " << what << " dtype=" << dtype_name(dt) << " F=" << F
                          << " ldx=" << X.ld() << " lddy=" << dY.ld() << " offset_bytes=" << offset
                          << " index=" << index_name(index_of<I>::value) << " seed=" << s << ": " << fault;
            return;
          }
#endif
        }
        const std::string ctx = what + " sddmm dtype=" + dtype_name(dt) + " F=" + std::to_string(F) +
                                " seed=" + std::to_string(s);
        expect_sddmm_close(g.view(), dY, X, ref.data(), got.data(), dt, ctx);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST(SddmmConformance, CpuMatchesReference) {
  run_sddmm<int32_t>(false);
  run_sddmm<int64_t>(false);
}
TEST(SddmmConformance, CudaMatchesReference) {
  TESSERA_REQUIRE_CUDA();
  run_sddmm<int32_t>(true);
  run_sddmm<int64_t>(true);
}

// --- normalize() -----------------------------------------------------------------------------
namespace {
Csr<int32_t> tiny_graph() {
  // Edges (src -> dst, weight): 1->0 (1), 0->1 (1), 1->2 (1), 2->2 (3, an existing self-loop).
  Coo<int32_t> coo;
  coo.rows = coo.cols = 3;
  coo.src = {1, 0, 1, 2};
  coo.dst = {0, 1, 2, 2};
  coo.w = {1, 1, 1, 3};
  return build_csr(coo);
}
// Weight of entry (row, col), summed over duplicates; NaN when absent.
template <class I>
double entry(const Csr<I>& g, int64_t row, int64_t col) {
  double s = 0;
  bool found = false;
  for (int64_t k = int64_t(g.rowptr[size_t(row)]); k < int64_t(g.rowptr[size_t(row) + 1]); ++k)
    if (int64_t(g.col[size_t(k)]) == col) s += g.values[size_t(k)], found = true;
  return found ? s : std::numeric_limits<double>::quiet_NaN();
}
}  // namespace

TEST(SpmmNormalize, BothMatchesHandComputedGcnNorm) {
  const Csr<int32_t> g = tiny_graph();
  // Loops added for nodes 0 and 1 (fill 1), node 2 keeps its loop of weight 3.
  // deg = (2, 2, 4): w'(i <- j) = w / sqrt(deg_i deg_j).
  const Csr<int32_t> n = normalize(g.view(), NormOptions{Norm::both, true, false});
  ASSERT_EQ(n.nnz(), 6);
  EXPECT_NEAR(entry(n, 0, 1), 0.5, 1e-7);
  EXPECT_NEAR(entry(n, 0, 0), 0.5, 1e-7);
  EXPECT_NEAR(entry(n, 1, 0), 0.5, 1e-7);
  EXPECT_NEAR(entry(n, 1, 1), 0.5, 1e-7);
  EXPECT_NEAR(entry(n, 2, 1), 1.0 / (2.0 * std::sqrt(2.0)), 1e-7);
  EXPECT_NEAR(entry(n, 2, 2), 0.75, 1e-7);
  EXPECT_NE(n.id, g.id);
  // improved: fill 2 -> deg = (3, 3, 4); the existing loop still keeps 3.
  const Csr<int32_t> m = normalize(g.view(), NormOptions{Norm::both, true, true});
  EXPECT_NEAR(entry(m, 0, 1), 1.0 / 3.0, 1e-7);
  EXPECT_NEAR(entry(m, 0, 0), 2.0 / 3.0, 1e-7);
  EXPECT_NEAR(entry(m, 2, 1), 1.0 / (2.0 * std::sqrt(3.0)), 1e-7);
  EXPECT_NEAR(entry(m, 2, 2), 0.75, 1e-7);
  // Without self-loops node 0 has deg 1, node 2 deg 4 (its own loop): no loop is added.
  const Csr<int32_t> k = normalize(g.view(), NormOptions{Norm::both, false, false});
  EXPECT_EQ(k.nnz(), 4);
  EXPECT_NEAR(entry(k, 0, 1), 1.0, 1e-7);
  EXPECT_NEAR(entry(k, 2, 2), 0.75, 1e-7);
  EXPECT_NEAR(entry(k, 2, 1), 0.5, 1e-7);
}

TEST(SpmmNormalize, LeftAndRightMakeRowAndColumnSumsOne) {
  const uint64_t s = seed();
  NastyOptions o;
  o.rows = o.cols = 300;
  const Csr<int64_t> g = build_csr(nasty_coo<int64_t>(o, s), BuildOptions{false, false});
  const Csr<int64_t> l = normalize(g.view(), NormOptions{Norm::left, true, false});
  const Csr<int64_t> r = normalize(g.view(), NormOptions{Norm::right, true, false});
  EXPECT_EQ(l.nnz(), g.nnz()) << "left/right add no loops";
  std::vector<double> rows(300, 0), cols(300, 0);
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t k = l.rowptr[size_t(i)]; k < l.rowptr[size_t(i) + 1]; ++k) {
      rows[size_t(i)] += l.values[size_t(k)];
      cols[size_t(r.col[size_t(k)])] += r.values[size_t(k)];
    }
  for (int64_t i = 0; i < 300; ++i) {
    const bool has_in = g.rowptr[size_t(i) + 1] > g.rowptr[size_t(i)];
    EXPECT_NEAR(rows[size_t(i)], has_in ? 1.0 : 0.0, 1e-5) << "row " << i << " seed " << s;
  }
  for (int64_t c = 0; c < 300; ++c)
    if (cols[size_t(c)] != 0) {
      EXPECT_NEAR(cols[size_t(c)], 1.0, 1e-5) << "col " << c << " seed " << s;
    }
}

// An independent transcription of PyG's gcn_norm on the edge list (in CSR order), compared on a
// random graph with duplicates, empty rows and random (sometimes repeated) self-loops.
TEST(SpmmNormalize, BothFollowsPygSemanticsOnRandomGraphs) {
  const uint64_t s = seed();
  for (bool improved : {false, true}) {
    NastyOptions o;
    o.rows = o.cols = 257;
    o.avg_degree = 4;
    Coo<int32_t> coo = nasty_coo<int32_t>(o, s + improved);
    std::mt19937_64 rng(s);
    for (int t = 0; t < 60; ++t) {  // sprinkle self-loops, some nodes get two
      const int32_t v = int32_t(rng() % 257);
      coo.src.push_back(v), coo.dst.push_back(v), coo.w.push_back(0.25f + float(rng() % 8));
    }
    BuildOptions keep;
    keep.deduplicate = false;
    const Csr<int32_t> g = build_csr(coo, keep);
    const Coo<int32_t> e = to_coo(g.view());  // PyG edge order = our CSR order
    const int64_t n = 257;
    // add_remaining_self_loops
    std::vector<int64_t> src, dst;
    std::vector<double> w;
    std::vector<double> loop(size_t(n), improved ? 2.0 : 1.0);
    for (int64_t k = 0; k < e.nnz(); ++k) {
      const double wk = e.w.empty() ? 1.0 : e.w[size_t(k)];
      if (e.src[size_t(k)] == e.dst[size_t(k)]) {
        loop[size_t(e.src[size_t(k)])] = wk;  // last one wins
      } else {
        src.push_back(e.src[size_t(k)]), dst.push_back(e.dst[size_t(k)]), w.push_back(wk);
      }
    }
    for (int64_t v = 0; v < n; ++v) src.push_back(v), dst.push_back(v), w.push_back(loop[size_t(v)]);
    std::vector<double> deg(size_t(n), 0);
    for (size_t k = 0; k < w.size(); ++k) deg[size_t(dst[k])] += w[k];  // scatter at the target
    std::vector<double> dinv(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) dinv[size_t(v)] = deg[size_t(v)] == 0 ? 0 : 1 / std::sqrt(deg[size_t(v)]);
    std::map<std::pair<int64_t, int64_t>, double> want;
    for (size_t k = 0; k < w.size(); ++k) want[{dst[k], src[k]}] += dinv[size_t(src[k])] * w[k] * dinv[size_t(dst[k])];

    const Csr<int32_t> got = normalize(g.view(), NormOptions{Norm::both, true, improved});
    ASSERT_EQ(got.nnz(), int64_t(w.size()));
    std::map<std::pair<int64_t, int64_t>, double> have;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = got.rowptr[size_t(i)]; k < got.rowptr[size_t(i) + 1]; ++k) {
        have[{i, got.col[size_t(k)]}] += got.values[size_t(k)];
        if (k > got.rowptr[size_t(i)]) {
          EXPECT_LE(got.col[size_t(k) - 1], got.col[size_t(k)]) << "row " << i;
        }
      }
    }
    ASSERT_EQ(have.size(), want.size());
    for (const auto& [key, v] : want) EXPECT_NEAR(have[key], v, 1e-6 * (1 + std::fabs(v))) << key.first << "," << key.second << " seed " << s;
  }
}

TEST(SpmmNormalize, RejectsNonSquareSymmetricNormalization) {
  Coo<int32_t> coo;
  coo.rows = 2, coo.cols = 3;
  coo.src = {2};
  coo.dst = {1};
  const Csr<int32_t> g = build_csr(coo);
  EXPECT_THROW(normalize(g.view(), NormOptions{}), Error);
  EXPECT_NO_THROW(normalize(g.view(), NormOptions{Norm::left, false, false}));
  EXPECT_EQ(parse_norm("both"), Norm::both);
  EXPECT_THROW(parse_norm("sideways"), Error);
}

// --- validation and variant selection --------------------------------------------------------
namespace {
template <class Fn>
void expect_error_containing(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected tessera::Error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(SpmmValidation, BadArgumentsNameTheProblem) {
  const Csr<int32_t> g = tiny_graph();
  Dense<float> X(3, 4), Y(3, 4), Xbad(2, 4), Ynarrow(3, 2);
  Dense<double> Yd(3, 4);
  const Exec cpu = Exec::cpu();
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, Xbad.view(), Y.view()}, cpu); },
                          "X has 2 rows but A has 3 columns");
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, X.view(), Ynarrow.view()}, cpu); },
                          "width");
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, X.view(), Yd.view()}, cpu); },
                          "float64");
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, X.view(), X.view()}, cpu); },
                          "overlaps");
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, X.view(), Y.view()}, cpu, "nope"); },
                          "unknown variant 'nope'");
  DenseView strided_bad = X.view();
  strided_bad.ld = 2;
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, strided_bad, Y.view()}, cpu); },
                          "leading dimension");
#ifdef TESSERA_WITH_CUDA
  expect_error_containing(
      [&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, X.view(), Y.view()}, cpu, "cuda.csr.warp_row"); },
      "cannot run");
#endif
  DenseView inside_element = X.view();  // a pointer into the middle of a float
  inside_element.data = static_cast<char*>(inside_element.data) + 1;
  inside_element.rows = 3, inside_element.cols = 3;
  expect_error_containing([&] { spmm(SpmmArgs<int32_t>{g.view(), nullptr, inside_element, Ynarrow.view()}, cpu); },
                          "not aligned");
  SddmmArgs<int32_t> sd{g.view(), Y.view(), X.view(), nullptr};
  expect_error_containing([&] { sddmm(sd, cpu); }, "dw is null");
  std::vector<float> dw(8);
  sd.dw = reinterpret_cast<char*>(dw.data()) + 2;
  expect_error_containing([&] { sddmm(sd, cpu); }, "dw 0x");
}

TEST(SpmmValidation, ChoiceOrderRequestedEnvHeuristic) {
  const Csr<int32_t> g = tiny_graph();
  Dense<float> X(3, 4, 1.0f), Y(3, 4);
  const SpmmArgs<int32_t> a{g.view(), nullptr, X.view(), Y.view()};
  EXPECT_EQ(spmm_choose(a, Exec::cpu(), "reference").source, "requested");
  ::setenv("TESSERA_VARIANT_SPMM", "reference", 1);
  const tune::Choice forced = spmm_choose(a, Exec::cpu());
  ::unsetenv("TESSERA_VARIANT_SPMM");
  EXPECT_EQ(forced.variant, "reference");
  EXPECT_EQ(forced.source, "requested");
  spmm(a, Exec::cpu());  // heuristic or cache: some eligible CPU variant, and a correct result
  // Row 2 = 1 * X[1] + 3 * X[2] = 4 everywhere; row 0 = X[1] = 1.
  EXPECT_FLOAT_EQ(Y(2, 3), 4.0f);
  EXPECT_FLOAT_EQ(Y(0, 0), 1.0f);
}

TEST(SpmmIo, FloorCountsGraphInputAndOutputOnce) {
  const Csr<int32_t> g = tiny_graph();  // 3 rows, 4 entries, weighted
  Dense<float> X(3, 8), Y(3, 8);
  const SpmmIo io = spmm_io(SpmmArgs<int32_t>{g.view(), nullptr, X.view(), Y.view()});
  EXPECT_DOUBLE_EQ(io.floor_bytes, 4.0 * 4 + 4 * (4 + 4) + 3 * 8 * 4 + 3 * 8 * 4);
  EXPECT_DOUBLE_EQ(io.gather_bytes, 4.0 * 8 * 4);
}
