// SpMM family front door: validate once, choose a variant (requested > tuned/cache > heuristic),
// run it. The registry table below is the single list of variants; the tuner, the CLI and the
// conformance tests read it.
#include "tessera/ops/spmm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>

#include "ops/spmm/variants.hpp"
#include "tessera/tune/choose.hpp"

namespace tessera::ops {

namespace {
bool same_device(const Device& a, const Device& b) { return a.kind == b.kind && a.index == b.index; }

// Bytes spanned by a strided view, for the aliasing check.
std::pair<const char*, const char*> span(const DenseView& v) {
  const char* p = static_cast<const char*>(v.data);
  if (!p || v.rows == 0 || v.cols == 0) return {p, p};
  return {p, p + size_t((v.rows - 1) * v.ld + v.cols) * dtype_size(v.dtype)};
}
bool overlaps(const DenseView& a, const DenseView& b) {
  auto [a0, a1] = span(a);
  auto [b0, b1] = span(b);
  return a0 < b1 && b0 < a1;
}

void check_dense(const char* op, const char* name, const DenseView& v, int64_t rows, const char* rows_what,
                 const Device& dev) {
  TESSERA_CHECK(v.rows == rows, op, ": ", name, " has ", v.rows, " rows but A has ", rows, " ", rows_what);
  TESSERA_CHECK(v.cols >= 0, op, ": ", name, " has negative width ", v.cols);
  TESSERA_CHECK(v.ld >= v.cols && v.ld >= 0, op, ": ", name, " leading dimension ", v.ld,
                " is smaller than its width ", v.cols);
  TESSERA_CHECK(v.data || v.rows == 0 || v.cols == 0, op, ": ", name, " data is null");
  // Every backend reads whole elements; a pointer inside an element is a caller bug (and a
  // misaligned-address fault on the GPU), never something to vectorize around.
  TESSERA_CHECK(reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.dtype) == 0, op, ": ", name, " data ",
                v.data, " is not aligned to its ", dtype_size(v.dtype), "-byte elements");
  TESSERA_CHECK(same_device(v.device, dev), op, ": ", name, " is on ", v.device.str(), " but A is on ",
                dev.str());
}

template <class I>
void check_graph(const char* op, const CsrView<I>& A, const Exec& exec) {
  TESSERA_CHECK(A.rows >= 0 && A.cols >= 0 && A.nnz >= 0, op, ": A has negative size (", A.rows, " x ",
                A.cols, ", nnz ", A.nnz, ")");
  TESSERA_CHECK(A.rowptr, op, ": A.rowptr is null");
  TESSERA_CHECK(A.col || A.nnz == 0, op, ": A.col is null but nnz = ", A.nnz);
  TESSERA_CHECK(same_device(A.device, exec.device), op, ": A is on ", A.device.str(),
                " but the call runs on ", exec.device.str());
  if constexpr (sizeof(I) == 4)
    TESSERA_CHECK(A.nnz <= INT32_MAX && A.rows < INT32_MAX && A.cols <= INT32_MAX, op,
                  ": graph too large for int32 indices");
  if (!A.device.is_cuda()) {  // O(1) consistency checks; full validation is validate(g)'s job
    TESSERA_CHECK(A.rowptr[0] == 0, op, ": A.rowptr[0] = ", int64_t(A.rowptr[0]), ", expected 0");
    TESSERA_CHECK(int64_t(A.rowptr[A.rows]) == A.nnz, op, ": A.rowptr[", A.rows, "] = ",
                  int64_t(A.rowptr[A.rows]), " but nnz = ", A.nnz);
  }
}

// Skew class of a graph (max row length over mean): 0 regular, 1 skewed, 2 power law.
// Memoized by graph id; device graphs that are anonymous (id 0) get -1 ("unknown").
int skew_class(double max_deg, double mean_deg) {
  const double r = max_deg / std::max(mean_deg, 1.0);
  return r < 8 ? 0 : r < 128 ? 1 : 2;
}

template <class I>
int graph_skew(const CsrView<I>& A, const Exec& exec) {
  static std::mutex mu;
  static std::map<uint64_t, int> memo;
  if (A.id) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(A.id); it != memo.end()) return it->second;
  }
  int64_t max_deg = 0;
  if (A.device.is_cuda()) {
#ifdef TESSERA_WITH_CUDA
    if (!A.id) return -1;
    max_deg = cuda::max_row_length(A, exec);
#endif
  } else {
    for (int64_t i = 0; i < A.rows; ++i)
      max_deg = std::max<int64_t>(max_deg, int64_t(A.rowptr[i + 1]) - int64_t(A.rowptr[i]));
  }
  const int s = skew_class(double(max_deg), A.rows ? double(A.nnz) / double(A.rows) : 0.0);
  if (A.id) {
    std::lock_guard<std::mutex> lock(mu);
    if (memo.size() > 4096) memo.clear();  // bounded: ids are never reused, old ones just age out
    memo[A.id] = s;
  }
  return s;
}

template <class I>
tune::Key spmm_key(const SpmmArgs<I>& a, const Exec& exec) {
  const auto sig = tune::GraphSignature::of(a.A.rows, a.A.nnz, graph_skew(a.A, exec));
  return {tune::device_key(exec.device), "spmm",
          std::string(dtype_name(a.X.dtype)) + "/" + index_name(index_of<I>::value), sig.str(),
          tune::width_bucket(a.X.cols)};
}

template <class I>
tune::Registry<SpmmArgs<I>> make_registry() {
  using A = SpmmArgs<I>;
  tune::Registry<A> reg("spmm");
  reg.add({"reference", tune::Backend::reference, nullptr,
           [](const A& a, const Exec&) { reference::spmm(a); }, "plain loops, double accumulation (oracle)"});
  reg.add({"cpu.rows", tune::Backend::cpu, nullptr, [](const A& a, const Exec& e) { cpu::spmm(a, e); },
           "OpenMP over rows, SIMD over features"});
#ifdef TESSERA_WITH_CUDA
  reg.add({"cuda.cusparse", tune::Backend::cuda,
           [](const A& a) { return cuda::cusparse_supports(a.X.dtype); },
           [](const A& a, const Exec& e) {
             cuda::spmm_cusparse(a, e);
             cuda::add_row_bias(a.Y, a.bias, e);  // cuSPARSE has no bias epilogue: one extra pass
           },
           "cuSPARSE SpMM (f32/f64), per-graph descriptors and timed CSR_ALG1/2/3"});
  reg.add({"cuda.csr.warp_row", tune::Backend::cuda, nullptr,
           [](const A& a, const Exec& e) { cuda::spmm_warp_row(a, e); },
           "warp (sub-warp for narrow rows) per row, 16-byte feature loads"});
  reg.add({"cuda.csr.feature_parallel", tune::Backend::cuda,
           [](const A& a) { return a.X.cols <= cuda::kFeatureParallelMaxWidth; },
           [](const A& a, const Exec& e) { cuda::spmm_feature_parallel(a, e); },
           "F <= 32: threads over (row, feature), several rows per warp"});
  register_spmm_wsb_variants<I>(reg);
#endif
  // Default without tuning: the custom kernels beat cuSPARSE's general path for GNN widths; the
  // WSB variants need a per-graph build, so they are chosen only by tuning or by request.
  reg.set_heuristic([](const A& a, const Device& d) -> std::string {
    if (!d.is_cuda()) return "cpu.rows";
#ifdef TESSERA_WITH_CUDA
    if (a.X.cols <= cuda::kFeatureParallelMaxWidth) return "cuda.csr.feature_parallel";
#endif
    return "cuda.csr.warp_row";
  });
  return reg;
}
}  // namespace

Norm parse_norm(const std::string& s) {
  if (s == "none") return Norm::none;
  if (s == "left" || s == "row") return Norm::left;
  if (s == "right" || s == "col") return Norm::right;
  if (s == "both" || s == "sym" || s == "gcn") return Norm::both;
  fail("unknown normalization '", s, "' (expected none, left, right or both)");
}

template <class I>
tune::Registry<SpmmArgs<I>>& spmm_registry() {
  static tune::Registry<SpmmArgs<I>> reg = make_registry<I>();
  return reg;
}

template <class I>
void validate_spmm(const SpmmArgs<I>& a, const Exec& exec) {
  check_graph("spmm", a.A, exec);
  check_dense("spmm", "X", a.X, a.A.cols, "columns", a.A.device);
  check_dense("spmm", "Y", a.Y, a.A.rows, "rows", a.A.device);
  TESSERA_CHECK(a.X.cols == a.Y.cols, "spmm: X has width ", a.X.cols, " but Y has width ", a.Y.cols);
  TESSERA_CHECK(a.X.dtype == a.Y.dtype, "spmm: X is ", dtype_name(a.X.dtype), " but Y is ",
                dtype_name(a.Y.dtype));
  TESSERA_CHECK(!overlaps(a.X, a.Y), "spmm: Y overlaps X (in-place SpMM is not supported)");
  const size_t ws = a.X.dtype == DType::f64 ? 8 : 4;  // accumulation type of the explicit weights
  TESSERA_CHECK(reinterpret_cast<uintptr_t>(a.values) % ws == 0, "spmm: values ", a.values,
                " is not aligned to its ", ws, "-byte elements");
  TESSERA_CHECK(reinterpret_cast<uintptr_t>(a.bias) % ws == 0, "spmm: bias ", a.bias, " is not aligned to its ", ws,
                "-byte elements");
}

template <class I>
void validate_sddmm(const SddmmArgs<I>& a, const Exec& exec) {
  check_graph("sddmm", a.A, exec);
  check_dense("sddmm", "dY", a.dY, a.A.rows, "rows", a.A.device);
  check_dense("sddmm", "X", a.X, a.A.cols, "columns", a.A.device);
  TESSERA_CHECK(a.X.cols == a.dY.cols, "sddmm: X has width ", a.X.cols, " but dY has width ", a.dY.cols);
  TESSERA_CHECK(a.X.dtype == a.dY.dtype, "sddmm: X is ", dtype_name(a.X.dtype), " but dY is ",
                dtype_name(a.dY.dtype));
  TESSERA_CHECK(a.dw || a.A.nnz == 0, "sddmm: dw is null but A has ", a.A.nnz, " entries");
  const size_t ws = a.X.dtype == DType::f64 ? 8 : 4;
  TESSERA_CHECK(reinterpret_cast<uintptr_t>(a.dw) % ws == 0, "sddmm: dw ", a.dw, " is not aligned to its ", ws,
                "-byte elements");
}

template <class I>
tune::Choice spmm_choose(const SpmmArgs<I>& args, const Exec& exec, const std::string& variant) {
  return tune::choose(spmm_registry<I>(), spmm_key(args, exec), args, exec, variant);
}

template <class I>
void spmm(const SpmmArgs<I>& args, const Exec& exec, const std::string& variant) {
  validate_spmm(args, exec);
  const tune::Choice c = spmm_choose(args, exec, variant);
  if (args.A.rows == 0 || args.X.cols == 0) return;  // nothing to write (after checking the request)
  spmm_registry<I>().get(c.variant).run(args, exec);
}

template <class I>
void sddmm(const SddmmArgs<I>& args, const Exec& exec) {
  validate_sddmm(args, exec);
  if (args.A.nnz == 0) return;
#ifdef TESSERA_WITH_CUDA
  if (exec.device.is_cuda()) return cuda::sddmm(args, exec);
#endif
  TESSERA_CHECK(!exec.device.is_cuda(), "sddmm: CUDA device requested but tessera was built without CUDA");
  cpu::sddmm(args, exec);
}

template <class I>
SpmmIo spmm_io(const SpmmArgs<I>& a) {
  const double ts = double(dtype_size(a.X.dtype));
  const double ws = a.values ? (a.X.dtype == DType::f64 ? 8.0 : 4.0) : a.A.values ? 4.0 : 0.0;
  const double F = double(a.X.cols);
  SpmmIo io;
  io.floor_bytes = double(a.A.rows + 1) * sizeof(I) + double(a.A.nnz) * (sizeof(I) + ws) +
                   double(a.A.cols) * F * ts + double(a.A.rows) * F * ts + (a.bias ? F * ws : 0.0);
  io.gather_bytes = double(a.A.nnz) * F * ts;
  return io;
}

void spmm_clear_caches() {
#ifdef TESSERA_WITH_CUDA
  cuda::cusparse_cache_clear();
  cuda::row_plan_cache_clear();
#endif
}

#define TESSERA_SPMM_INSTANTIATE(I)                                                               \
  template tune::Registry<SpmmArgs<I>>& spmm_registry<I>();                                       \
  template void validate_spmm<I>(const SpmmArgs<I>&, const Exec&);                                \
  template void validate_sddmm<I>(const SddmmArgs<I>&, const Exec&);                              \
  template tune::Choice spmm_choose<I>(const SpmmArgs<I>&, const Exec&, const std::string&);      \
  template void spmm<I>(const SpmmArgs<I>&, const Exec&, const std::string&);                     \
  template void sddmm<I>(const SddmmArgs<I>&, const Exec&);                                       \
  template SpmmIo spmm_io<I>(const SpmmArgs<I>&);
TESSERA_SPMM_INSTANTIATE(int32_t)
TESSERA_SPMM_INSTANTIATE(int64_t)

}  // namespace tessera::ops
