// SpMM family conformance: every registered variant that runs on this machine against the
// reference backend, on fresh seeded inputs (R-MAT power law, empty rows, one row with 1e5
// in-edges, duplicate edges kept, widths that are not multiples of 4/8/32, int32 and int64
// indices, strided X and Y, all four dtypes, three weight sources). Outputs are poisoned with NaN
// before each run; NaN never passes; the padding of a strided Y must stay untouched.
// CUDA variants run in the *Cuda* tests on the GPU machine.
#include <cmath>
#include <cstring>
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
  return out;
}

const std::vector<int64_t> kWidths = {1, 3, 5, 17, 33, 64, 100, 130};
const DType kDtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

enum class Weights { graph, explicit_values, ones };

// Runs every variant in `names` on one case and compares with the reference.
template <class I>
void check_case(const Csr<I>& g, const std::string& what, DType dt, int64_t F, bool strided, Weights wsrc,
                uint64_t s, bool cuda, const std::vector<std::string>& names) {
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

  SpmmArgs<I> ref{gw.view(), host_values, X.view(), Yref.view()};
  Yref.poison();
  reference::spmm(ref);
  const std::vector<double> bound = error_bound(gw.view(), host_values, X, dt);

  for (const auto& name : names) {
    if (name == "reference") continue;
    HostMatrix Y(dt, g.rows, F, F + pad_y);
    Y.poison();
    const std::string ctx = what + " variant=" + name + " dtype=" + dtype_name(dt) + " index=" +
                            index_name(index_of<I>::value) + " F=" + std::to_string(F) +
                            (strided ? " strided" : "") + " weights=" + std::to_string(int(wsrc)) +
                            " seed=" + std::to_string(s);
    if (!cuda) {
      SpmmArgs<I> a{gw.view(), host_values, X.view(), Y.view()};
      if (!spmm_registry<I>().is_eligible(spmm_registry<I>().get(name), a, Device{})) continue;
      spmm(a, Exec::cpu(), name);
    } else {
#ifdef TESSERA_WITH_CUDA
      DeviceGraph<I> dg(gw);
      DeviceCopy dX(X), dY(Y), dv(host_values, wsrc == Weights::explicit_values
                                                   ? size_t(g.nnz()) * (dt == DType::f64 ? 8 : 4)
                                                   : 0);
      SpmmArgs<I> a{dg.view(), dv.ptr, dX.view(X), dY.view(Y)};
      Exec ex;
      ex.device = Device{DeviceKind::cuda, 0};
      if (!spmm_registry<I>().is_eligible(spmm_registry<I>().get(name), a, ex.device)) continue;
      spmm(a, ex, name);
      dY.copy_back(Y, ex);
#endif
    }
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
    for (DType dt : kDtypes)
      for (int64_t F : kWidths) {
        ++combo;
        const bool strided = combo % 3 == 0;
        const Weights w = Weights(combo % 3);
        check_case(g, what, dt, F, strided, w, s + uint64_t(combo), cuda, names);
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
    for (DType dt : kDtypes)
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
          DeviceGraph<I> dg(g);
          DeviceCopy dX(X), ddY(dY), ddw(got.data(), got.size());
          Exec ex;
          ex.device = Device{DeviceKind::cuda, 0};
          sddmm(SddmmArgs<I>{dg.view(), ddY.view(dY), dX.view(X), ddw.ptr}, ex);
          ddw.copy_back(got.data(), got.size(), ex);
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
