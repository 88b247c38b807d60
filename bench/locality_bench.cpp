// Locality study: does reordering help gather-heavy mappings more than coalesced ones?
//
// For each benchmark graph, width F and METIS partition size S it times the warp-per-node sum
// Y = A X (src/cuda/study/locality.cu) in the feature-parallel and neighbour-parallel mappings with
// scalar and 16-byte loads, on the original ids and on the METIS partition order, and reports
//   s = t_original / t_reordered  (speedup from reordering, per mapping and load width)
//   delta_s = s_neighbour - s_feature
// Reorderings are computed on the host, in parallel over (graph, S) jobs, and cached on disk
// (--cache) so repeated runs only time kernels. Graph "SPEC+shuffle" relabels the ids randomly first
// (hides a generator's built-in locality). JSON (--json FILE) feeds bench/plot_locality.py.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../apps/cli/graph_arg.hpp"
#include "bench_common.hpp"
#ifdef TESSERA_WITH_CUDA
#include "../src/cuda/study/locality.hpp"
#include "tessera/core/cuda_check.hpp"
#endif
#include "tessera/graph/stats.hpp"
#include "tessera/reorder/orders.hpp"

#ifdef TESSERA_WITH_CUDA
namespace {
using namespace tessera;
using nlohmann::json;
namespace study = tessera::cuda::study;
namespace fs = std::filesystem;

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t bytes) { TESSERA_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 16))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

struct DevGraph {
  std::unique_ptr<DevBuf> rowptr, col;
  CsrView<int32_t> view;
};

DevGraph upload(const Csr<int64_t>& g) {
  const Csr<int32_t> h = convert_index<int32_t>(g);
  DevGraph d;
  d.rowptr = std::make_unique<DevBuf>(h.rowptr.size() * sizeof(int32_t));
  d.col = std::make_unique<DevBuf>(h.col.size() * sizeof(int32_t));
  TESSERA_CUDA_CHECK(cudaMemcpy(d.rowptr->p, h.rowptr.data(), h.rowptr.size() * 4, cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(d.col->p, h.col.data(), h.col.size() * 4, cudaMemcpyHostToDevice));
  d.view = {h.rows, h.cols, h.nnz(), static_cast<int32_t*>(d.rowptr->p), static_cast<int32_t*>(d.col->p), nullptr,
            Device{DeviceKind::cuda, 0}, g.id};
  return d;
}

// Median of `reps` timed runs after one warm-up, CUDA events on the bench stream.
double time_ms(const Exec& exec, const std::function<void()>& fn, int reps) {
  const cudaStream_t s = cuda_stream(exec.stream);
  cudaEvent_t a, b;
  TESSERA_CUDA_CHECK(cudaEventCreate(&a));
  TESSERA_CUDA_CHECK(cudaEventCreate(&b));
  fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    TESSERA_CUDA_CHECK(cudaEventRecord(a, s));
    fn();
    TESSERA_CUDA_CHECK(cudaEventRecord(b, s));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string file_safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Order cache: raw int64 old-of-new ids, named by graph and part size.
bool load_order(const std::string& path, int64_t n, std::vector<int64_t>& order) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  order.resize(size_t(n));
  f.read(reinterpret_cast<char*>(order.data()), std::streamsize(n * 8));
  return f.gcount() == std::streamsize(n * 8) && f.peek() == EOF;
}
void save_order(const std::string& path, const std::vector<int64_t>& order) {
  io::write_file(path, std::string_view(reinterpret_cast<const char*>(order.data()), order.size() * 8));
}

struct Loaded {
  std::string name;
  Csr<int64_t> graph;
};

Loaded load(const std::string& spec) {
  const size_t plus = spec.find("+shuffle");
  const std::string base = spec.substr(0, plus);
  Loaded l{spec, cli::load_graph_arg(base, false).graph};
  if (plus != std::string::npos) {  // a fixed seed: the cache and reruns see the same ids
    std::vector<int64_t> o(size_t(l.graph.rows));
    std::iota(o.begin(), o.end(), int64_t(0));
    std::shuffle(o.begin(), o.end(), std::mt19937_64(12345));
    l.graph = reorder::Permutation::from_order(std::move(o)).apply(l.graph.view());
  }
  return l;
}

std::vector<std::string> default_graphs() {
  std::vector<std::string> g = {"rmat:scale=18,degree=16,scramble=1", "grid:rows=1024,cols=1024",
                                "clustered:nodes=65536,clusters=256,degree=200,p_in=0.9+shuffle"};
  for (const char* d : {"cora", "pubmed", "road-chicago-regional"}) {
    // TESSERA_SHARED_DATA (as the tests read it), else ../shared/data next to the checkout.
    const char* env = std::getenv("TESSERA_SHARED_DATA");
    const std::string p = (env ? std::string(env) : std::string(TESSERA_SOURCE_DIR) + "/../shared/data") + "/" + d;
    if (fs::exists(p)) g.push_back(p);
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Locality study: reordering gap between neighbour- and feature-parallel aggregation");
  std::vector<std::string> graphs = default_graphs();
  std::vector<int64_t> widths = {32, 64, 128, 256, 512};
  std::vector<int64_t> part_sizes = {128, 1024, 8192, 65536};
  std::string json_path, cache_dir = "/tmp/tessera_locality_cache";
  int reps = 5;
  bool orders_only = false;
  unsigned jobs = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  app.add_option("--graphs", graphs, "graph specs / files / data-set dirs; SPEC+shuffle relabels randomly first");
  app.add_option("--widths", widths, "feature widths (multiples of 8)");
  app.add_option("--part-sizes", part_sizes, "METIS partition sizes (nodes per part)");
  app.add_option("--reps", reps, "timed repetitions (median)");
  app.add_option("--jobs", jobs, "host threads computing reorderings");
  app.add_option("--cache", cache_dir, "directory of cached orders ('' = no cache)");
  app.add_option("--json", json_path, "write results as JSON to this file");
  app.add_flag("--orders-only", orders_only, "compute (and cache) the reorderings, then stop (no GPU needed)");
  CLI11_PARSE(app, argc, argv);
  try {
    TESSERA_CHECK(orders_only || cuda_available(), "no CUDA device");
    TESSERA_CHECK(reorder::metis_available(), "built without METIS");
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Loaded> loaded;
    for (const auto& g : graphs) {
      std::fprintf(stderr, "loading %s\n", g.c_str());
      loaded.push_back(load(g));
    }
    // Reorderings: every (graph, S) job, `jobs` at a time.
    if (!cache_dir.empty()) fs::create_directories(cache_dir);
    std::map<std::pair<size_t, int64_t>, std::vector<int64_t>> orders;
    std::map<std::pair<size_t, int64_t>, double> order_seconds;
    std::vector<std::pair<size_t, int64_t>> todo;
    for (size_t gi = 0; gi < loaded.size(); ++gi)
      for (int64_t s : part_sizes) {
        const std::string path = cache_dir.empty() ? "" : cache_dir + "/" + file_safe(loaded[gi].name) + "_s" + std::to_string(s) + ".perm";
        std::vector<int64_t> o;
        if (!path.empty() && load_order(path, loaded[gi].graph.rows, o)) {
          orders[{gi, s}] = std::move(o);
          order_seconds[{gi, s}] = -1;  // cached
        } else {
          todo.push_back({gi, s});
        }
      }
    for (size_t at = 0; at < todo.size(); at += jobs) {
      std::vector<std::future<std::pair<std::vector<int64_t>, double>>> fut;
      for (size_t j = at; j < std::min(todo.size(), at + jobs); ++j)
        fut.push_back(std::async(std::launch::async, [&, j] {
          const auto [gi, s] = todo[j];
          const auto t = std::chrono::steady_clock::now();
          auto p = reorder::partition_order(loaded[gi].graph.view(), s);
          return std::pair{p.order(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count()};
        }));
      for (size_t j = at; j < std::min(todo.size(), at + jobs); ++j) {
        auto [o, sec] = fut[j - at].get();
        const auto [gi, s] = todo[j];
        std::fprintf(stderr, "order %s S=%lld: %.2f s\n", loaded[gi].name.c_str(), (long long)s, sec);
        if (!cache_dir.empty())
          save_order(cache_dir + "/" + file_safe(loaded[gi].name) + "_s" + std::to_string(s) + ".perm", o);
        orders[{gi, s}] = std::move(o);
        order_seconds[{gi, s}] = sec;
      }
    }
    const double reorder_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (orders_only) {
      std::fprintf(stderr, "orders ready in %.1f s\n", reorder_s);
      return 0;
    }

    cudaStream_t stream;
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Exec exec{Device{DeviceKind::cuda, 0}, stream};
    const int64_t fmax = *std::max_element(widths.begin(), widths.end());
    json out = {{"device", device_name(exec.device)}, {"reps", reps}, {"reorder_seconds_total", reorder_s},
                {"graphs", json::array()}};
    std::printf("%-44s %5s %6s %7s %9s %9s %9s %9s %7s %7s %7s\n", "graph", "F", "S", "load", "t_feat", "t_feat_r",
                "t_nbr", "t_nbr_r", "s_feat", "s_nbr", "delta");
    for (size_t gi = 0; gi < loaded.size(); ++gi) {
      const auto& L = loaded[gi];
      const GraphStats st = graph_stats(L.graph.view(), StatsOptions{false, true});
      DevBuf X(size_t(L.graph.cols) * size_t(fmax) * 4), Y(size_t(L.graph.rows) * size_t(fmax) * 4);
      {  // values do not matter for timing, but keep them finite
        std::vector<float> h(size_t(L.graph.cols) * size_t(fmax));
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1, 1);
        for (auto& v : h) v = u(rng);
        TESSERA_CUDA_CHECK(cudaMemcpy(X.p, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
      }
      json gj = {{"graph", L.name}, {"nodes", L.graph.rows}, {"edges", L.graph.nnz()},
                 {"degree_mean", st.degree_mean}, {"degree_max", st.degree_max},
                 {"degree_skewness", st.degree_skewness}, {"fill_8x8", st.tiles_8x8.mean_fill},
                 {"reorder_seconds", json::object()}, {"results", json::array()}};
      // t[order][F][mapping][load]; order -1 = original.
      auto time_all = [&](const DevGraph& d, int64_t F, study::Mapping m, study::Load l) {
        return time_ms(exec, [&] { study::aggregate_sum(d.view, static_cast<float*>(X.p), static_cast<float*>(Y.p), F, m, l, exec); }, reps);
      };
      std::map<std::tuple<int64_t, int, int>, double> t_orig;
      {
        const DevGraph d = upload(L.graph);
        for (int64_t F : widths)
          for (int m = 0; m < 2; ++m)
            for (int l = 0; l < 2; ++l)
              if (study::supports(F, study::Mapping(m), study::Load(l)))
                t_orig[{F, m, l}] = time_all(d, F, study::Mapping(m), study::Load(l));
      }
      for (int64_t S : part_sizes) {
        const auto p = reorder::Permutation::from_order(orders.at({gi, S}));
        const Csr<int64_t> rg = p.apply(L.graph.view());
        const auto q = reorder::order_quality(rg.view());
        gj["reorder_seconds"][std::to_string(S)] = order_seconds.at({gi, S});
        const DevGraph d = upload(rg);
        for (int64_t F : widths)
          for (int l = 0; l < 2; ++l) {
            const auto fl = study::Load(l);
            if (!study::supports(F, study::Mapping::feature_parallel, fl) ||
                !study::supports(F, study::Mapping::neighbour_parallel, fl))
              continue;
            const double tf = t_orig.at({F, 0, l}), tn = t_orig.at({F, 1, l});
            const double tfr = time_all(d, F, study::Mapping::feature_parallel, fl);
            const double tnr = time_all(d, F, study::Mapping::neighbour_parallel, fl);
            const double sf = tf / tfr, sn = tn / tnr;
            gj["results"].push_back({{"width", F}, {"part_size", S}, {"parts", (L.graph.rows + S - 1) / S},
                                     {"load", study::load_name(fl)}, {"t_feature", tf}, {"t_feature_reordered", tfr},
                                     {"t_neighbour", tn}, {"t_neighbour_reordered", tnr}, {"s_feature", sf},
                                     {"s_neighbour", sn}, {"delta_s", sn - sf}, {"fill_8x8_reordered", q.fill_8x8}});
            std::printf("%-44s %5lld %6lld %7s %9.4f %9.4f %9.4f %9.4f %7.3f %7.3f %+7.3f\n",
                        L.name.substr(0, 44).c_str(), (long long)F, (long long)S, study::load_name(fl), tf, tfr, tn,
                        tnr, sf, sn, sn - sf);
          }
      }
      out["graphs"].push_back(gj);
    }
    TESSERA_CUDA_CHECK(cudaStreamDestroy(stream));
    out["total_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!json_path.empty() && !bench::write_json(json_path, out)) return 1;
    std::fprintf(stderr, "total %.1f s (reorderings %.1f s)\n", out["total_seconds"].get<double>(), reorder_s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locality_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
#else
int main() {
  std::fprintf(stderr, "locality_bench: tessera was built without CUDA\n");
  return 1;
}
#endif
