// Segment-reduce dispatch: validate once, pick a variant with tune::choose (requested > tuned >
// cache > heuristic), run it. The variant table is the single source for the dispatcher, the tuner and the tests.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "ops/segment_reduce/backends.hpp"
#include "tessera/core/error.hpp"
#include "tessera/tune/choose.hpp"

namespace tessera::ops {

Reduce parse_reduce(const std::string& s) {
  if (s == "sum" || s == "add") return Reduce::sum;
  if (s == "mean") return Reduce::mean;
  if (s == "max") return Reduce::max;
  if (s == "min") return Reduce::min;
  fail("segment_reduce: unknown reduction '", s, "' (expected max, min, sum or mean)");
}
const char* reduce_name(Reduce r) {
  switch (r) {
    case Reduce::sum: return "sum";
    case Reduce::mean: return "mean";
    case Reduce::max: return "max";
    case Reduce::min: return "min";
  }
  return "?";
}

int64_t heavy_degree_threshold(const int64_t* degrees, int64_t n, double quantile, int64_t chunk) {
  if (quantile <= 0 || n == 0) return std::numeric_limits<int64_t>::max();
  std::vector<int64_t> d(degrees, degrees + n);
  const int64_t k = std::min<int64_t>(n - 1, int64_t(quantile * double(n)));
  std::nth_element(d.begin(), d.begin() + k, d.end());
  // Splitting a row into chunks only pays when it has at least two chunks of work.
  return std::max<int64_t>(d[size_t(k)], 2 * std::max<int64_t>(chunk, 1));
}

namespace {

void check_dense(const DenseView& m, const char* name, int64_t rows, int64_t cols, const char* rows_what) {
  TESSERA_CHECK(m.rows == rows, "segment_reduce: ", name, " has ", m.rows, " rows but ", rows_what, " is ", rows);
  TESSERA_CHECK(m.cols == cols, "segment_reduce: ", name, " has ", m.cols, " columns but the feature width is ", cols);
  TESSERA_CHECK(m.ld >= m.cols, "segment_reduce: ", name, " has leading dimension ", m.ld, " < ", m.cols, " columns");
  TESSERA_CHECK(m.data != nullptr || m.rows * m.cols == 0, "segment_reduce: ", name, " has no data");
}

// Host graphs are checked in full (O(rows + nnz), far below the O(nnz x F) of the operator); device
// graphs are checked once per graph id by the CUDA backend when it builds its partition.
template <class I>
void check_host_graph(const CsrView<I>& g) {
  TESSERA_CHECK(g.rows >= 0 && g.cols >= 0 && g.nnz >= 0, "segment_reduce: negative graph dimensions");
  TESSERA_CHECK(g.rowptr != nullptr, "segment_reduce: graph has no row offsets");
  TESSERA_CHECK(int64_t(g.rowptr[0]) == 0, "segment_reduce: row offsets start at ", int64_t(g.rowptr[0]), ", not 0");
  for (int64_t i = 0; i < g.rows; ++i)
    TESSERA_CHECK(g.rowptr[i + 1] >= g.rowptr[i], "segment_reduce: non-monotone offsets at row ", i);
  TESSERA_CHECK(int64_t(g.rowptr[g.rows]) == g.nnz, "segment_reduce: offsets end at ", int64_t(g.rowptr[g.rows]),
                " but nnz is ", g.nnz);
  for (int64_t k = 0; k < g.nnz; ++k)
    TESSERA_CHECK(g.col[k] >= 0 && int64_t(g.col[k]) < g.cols, "segment_reduce: entry ", k, ": column ",
                  int64_t(g.col[k]), " out of range [0, ", g.cols, ")");
}

template <class I>
void validate_forward(const SegmentReduceArgs<I>& a) {
  const int64_t F = a.X.cols;
  check_dense(a.X, "X", a.A.cols, F, "the graph's column count");
  check_dense(a.Y, "Y", a.A.rows, F, "the graph's row count");
  TESSERA_CHECK(a.X.dtype == a.Y.dtype, "segment_reduce: X is ", dtype_name(a.X.dtype), " but Y is ",
                dtype_name(a.Y.dtype));
  TESSERA_CHECK(a.X.device == a.A.device && a.Y.device == a.A.device, "segment_reduce: graph on ",
                a.A.device.str(), ", X on ", a.X.device.str(), ", Y on ", a.Y.device.str());
  if (!a.A.device.is_cuda()) check_host_graph(a.A);
}

template <class I>
void validate_backward(const SegmentReduceBackwardArgs<I>& a) {
  const int64_t F = a.dY.cols;
  check_dense(a.dY, "dY", a.A.rows, F, "the graph's row count");
  check_dense(a.dX, "dX", a.A.cols, F, "the graph's column count");
  TESSERA_CHECK(a.dX.dtype == a.dY.dtype, "segment_reduce_backward: dY is ", dtype_name(a.dY.dtype),
                " but dX is ", dtype_name(a.dX.dtype));
  TESSERA_CHECK(a.dX.device == a.A.device && a.dY.device == a.A.device, "segment_reduce_backward: graph on ",
                a.A.device.str(), ", dY on ", a.dY.device.str(), ", dX on ", a.dX.device.str());
  TESSERA_CHECK(!has_arg(a.reduce) || a.arg != nullptr || a.A.rows * F == 0, "segment_reduce_backward: ",
                reduce_name(a.reduce), " needs the forward's arg");
  if (!a.A.device.is_cuda()) check_host_graph(a.A);
}

template <class I>
tune::Registry<SegmentReduceArgs<I>> make_registry() {
  using Args = SegmentReduceArgs<I>;
  tune::Registry<Args> r("segment_reduce");
  r.add({"reference", tune::Backend::reference, nullptr,
         [](const Args& a, const Exec&) { detail::segment_reduce_reference(a); },
         "plain loops, double accumulation (the oracle)"});
  r.add({"cpu", tune::Backend::cpu, nullptr,
         [](const Args& a, const Exec& e) { detail::segment_reduce_cpu(a, e); },
         "OpenMP over rows, SIMD over a 128-column feature tile"});
#ifdef TESSERA_WITH_CUDA
  struct Split { const char* name; double q; };
  for (Split s : {Split{"q0.99", 0.99}, Split{"q0.999", 0.999}, Split{"none", 0.0}})
    for (int w : {4, 8})
      for (int c : {256, 1024}) {
        if (s.q <= 0 && c != 256) continue;  // no split: the chunk size is unused
        detail::CudaSegmentConfig cfg{s.q, w, c};
        std::string name = std::string("cuda.") + s.name + ".w" + std::to_string(w);
        if (s.q > 0) name += ".c" + std::to_string(c);
        const bool split = s.q > 0;
        r.add({name, tune::Backend::cuda,
               [split](const Args& a) {
                 // max/min keep j in 32 bits of the packed word; f64 has no 32-bit key, so no split.
                 if (has_arg(a.reduce) && a.A.cols >= int64_t(0xffffffffLL)) return false;
                 return !(split && has_arg(a.reduce) && a.X.dtype == DType::f64);
               },
               [cfg](const Args& a, const Exec& e) { detail::segment_reduce_cuda(a, e, cfg); },
               split ? "degree-aware: warp per light node, (node, edge chunk) blocks + packed 64-bit atomics for heavy nodes"
                     : "warp per node, no split"});
      }
#endif
  r.set_heuristic([](const Args& a, const Device& d) -> std::string {
    if (!d.is_cuda()) return "cpu";
    // Split at the 0.99 quantile with 8-warp blocks: rows far above the mean get (row, chunk)
    // blocks, which matters on skewed graphs; on regular graphs the threshold rises to two chunks
    // and the split is empty, so the default costs nothing there. f64 max/min have no packed key.
    if (has_arg(a.reduce) && a.X.dtype == DType::f64) return "cuda.none.w8";
    return "cuda.q0.99.w8.c256";
  });
  return r;
}

// Skew class (max in-degree over mean): 0 regular, 1 skewed, 2 power law; memoized per graph id.
template <class I>
int graph_skew(const CsrView<I>& g, const Exec& exec) {
  static std::mutex mu;
  static std::map<uint64_t, int> memo;
  if (g.id) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(g.id); it != memo.end()) return it->second;
  }
  int64_t max_deg = 0;
  if (g.device.is_cuda()) {
#ifdef TESSERA_WITH_CUDA
    if (!g.id) return -1;
    max_deg = detail::max_degree_cuda(g, exec);
#endif
  } else {
    for (int64_t i = 0; i < g.rows; ++i) max_deg = std::max<int64_t>(max_deg, int64_t(g.rowptr[i + 1] - g.rowptr[i]));
  }
  const double r = double(max_deg) / std::max(g.rows ? double(g.nnz) / double(g.rows) : 0.0, 1.0);
  const int s = r < 8 ? 0 : r < 128 ? 1 : 2;
  if (g.id) {
    std::lock_guard<std::mutex> lock(mu);
    if (memo.size() > 4096) memo.clear();
    memo[g.id] = s;
  }
  return s;
}

template <class I>
tune::Key key_of(const SegmentReduceArgs<I>& a, const Exec& exec) {
  const auto sig = tune::GraphSignature::of(a.A.rows, a.A.nnz, graph_skew(a.A, exec));
  return {tune::device_key(exec.device), std::string("segment_reduce.") + reduce_name(a.reduce),
          std::string(dtype_name(a.X.dtype)) + "/" + index_name(index_of<I>::value), sig.str(),
          tune::width_bucket(a.X.cols)};
}

}  // namespace

template <class I> tune::Registry<SegmentReduceArgs<I>>& segment_reduce_registry() {
  static tune::Registry<SegmentReduceArgs<I>> r = make_registry<I>();
  return r;
}

template <class I>
tune::Choice segment_reduce_choose(const SegmentReduceArgs<I>& a, const Exec& exec, const std::string& variant) {
  validate_forward(a);
  TESSERA_CHECK(exec.device == a.A.device, "segment_reduce: exec on ", exec.device.str(), " but the graph is on ",
                a.A.device.str());
  return tune::choose(segment_reduce_registry<I>(), key_of(a, exec), a, exec, variant);
}

template <class I>
void segment_reduce(const SegmentReduceArgs<I>& a, const Exec& exec, const std::string& variant) {
  const tune::Choice c = segment_reduce_choose(a, exec, variant);
  if (a.A.rows == 0 || a.X.cols == 0) return;
  segment_reduce_registry<I>().get(c.variant).run(a, exec);
}

template <class I> double segment_reduce_io_bytes(const SegmentReduceArgs<I>& a) {
  const double F = double(a.X.cols), t = double(dtype_size(a.X.dtype));
  return double(a.A.rows + 1 + a.A.nnz) * sizeof(I) + double(a.A.nnz) * F * t + double(a.A.rows) * F * t +
         (has_arg(a.reduce) && a.arg ? double(a.A.rows) * F * 8 : 0.0);
}

template <class I>
void segment_reduce_backward(const SegmentReduceBackwardArgs<I>& a, const Exec& exec, const std::string& backend) {
  validate_backward(a);
  TESSERA_CHECK(exec.device == a.A.device, "segment_reduce_backward: exec on ", exec.device.str(),
                " but the graph is on ", a.A.device.str());
  const std::string b = backend.empty() ? (exec.device.is_cuda() ? "cuda" : "cpu") : backend;
  TESSERA_CHECK(b == "reference" || b == "cpu" || b == "cuda", "segment_reduce_backward: unknown backend '", b,
                "' (reference, cpu, cuda)");
  TESSERA_CHECK((b == "cuda") == exec.device.is_cuda(), "segment_reduce_backward: backend ", b, " cannot run on ",
                exec.device.str());
  if (a.A.cols == 0 || a.dY.cols == 0) return;
  if (b == "reference") return detail::segment_reduce_backward_reference(a);
  if (b == "cpu") return detail::segment_reduce_backward_cpu(a, exec);
#ifdef TESSERA_WITH_CUDA
  detail::segment_reduce_backward_cuda(a, exec);
#else
  fail("segment_reduce_backward: tessera was built without CUDA");
#endif
}

#define TESSERA_INSTANTIATE(I)                                                                              \
  template tune::Registry<SegmentReduceArgs<I>>& segment_reduce_registry<I>();                              \
  template tune::Choice segment_reduce_choose<I>(const SegmentReduceArgs<I>&, const Exec&, const std::string&); \
  template double segment_reduce_io_bytes<I>(const SegmentReduceArgs<I>&);                                   \
  template void segment_reduce<I>(const SegmentReduceArgs<I>&, const Exec&, const std::string&);            \
  template void segment_reduce_backward<I>(const SegmentReduceBackwardArgs<I>&, const Exec&, const std::string&);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::ops
