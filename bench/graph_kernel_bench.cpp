// Marginalized graph kernel benchmark: Gram matrices of TU collections and of synthetic
// protein-like graphs (points in a box, edges between spatial neighbours), CPU vs CUDA in the same
// run, plus the dense reference (one core) on a sample of small pairs. Reports pairs/s, PCG
// iterations, achieved mat-vec FLOP rate (and its share of the H200 fp32 peak), GPU/CPU and
// GPU/dense-reference ratios. --json writes one record per data set.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "tessera/io/graph_io.hpp"
#include "tessera/kernels/marginalized.hpp"

using namespace tessera;
using namespace tessera::kernels;
using nlohmann::json;

namespace {
constexpr double kH200Fp32Peak = 67e12;

std::vector<LabeledGraph> protein_like(int count, int nmin, int nmax, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<LabeledGraph> out;
  for (int g = 0; g < count; ++g) {
    const int n = nmin + int(rng() % uint64_t(std::max(1, nmax - nmin + 1)));
    // Residues along a random walk chain in 3D (1 unit steps), contacts below 1.6 units.
    std::vector<std::array<double, 3>> pts(static_cast<size_t>(n));
    std::normal_distribution<double> step(0, 0.6);
    for (int i = 1; i < n; ++i)
      for (int k = 0; k < 3; ++k) pts[size_t(i)][size_t(k)] = pts[size_t(i - 1)][size_t(k)] + step(rng);
    // Cell grid for neighbour search.
    std::map<std::array<int, 3>, std::vector<int>> cells;
    auto cell = [](const std::array<double, 3>& p) {
      return std::array<int, 3>{int(std::floor(p[0] / 1.6)), int(std::floor(p[1] / 1.6)), int(std::floor(p[2] / 1.6))};
    };
    for (int i = 0; i < n; ++i) cells[cell(pts[size_t(i)])].push_back(i);
    std::vector<std::vector<std::pair<int, float>>> rows(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto c = cell(pts[size_t(i)]);
      for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            const auto it = cells.find({c[0] + dx, c[1] + dy, c[2] + dz});
            if (it == cells.end()) continue;
            for (int j : it->second) {
              if (j == i) continue;
              double d2 = 0;
              for (int k = 0; k < 3; ++k) d2 += std::pow(pts[size_t(i)][size_t(k)] - pts[size_t(j)][size_t(k)], 2);
              if (d2 < 1.6 * 1.6) rows[size_t(i)].push_back({j, float(std::exp(-d2 / 2))});
            }
          }
      std::sort(rows[size_t(i)].begin(), rows[size_t(i)].end());
    }
    LabeledGraph lg;
    lg.adj.rows = lg.adj.cols = n;
    lg.adj.rowptr.assign(size_t(n + 1), 0);
    for (int i = 0; i < n; ++i) {
      for (auto [j, w] : rows[size_t(i)]) {
        lg.adj.col.push_back(j);
        lg.adj.values.push_back(w);
      }
      lg.adj.rowptr[size_t(i + 1)] = int32_t(lg.adj.col.size());
      lg.node_labels.push_back(int32_t(rng() % 20));  // amino-acid type
    }
    out.push_back(std::move(lg));
  }
  return out;
}

json run_set(const std::string& name, std::vector<LabeledGraph> graphs, Options o, bool gpu, int ref_pairs) {
  json rec = {{"dataset", name}, {"graphs", graphs.size()}};
  int64_t nodes = 0;
  for (const auto& g : graphs) nodes += g.num_nodes();
  rec["mean_nodes"] = graphs.empty() ? 0.0 : double(nodes) / double(graphs.size());
  auto one = [&](const Options& oo) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = MarginalizedGraphKernel(oo).gram(graphs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return json{{"seconds", s},
                {"solve_seconds", r.stats.seconds},
                {"pairs", r.stats.pairs},
                {"pairs_per_second", double(r.stats.pairs) / s},
                {"mean_iterations", r.stats.mean_iterations},
                {"max_iterations", r.stats.max_iterations},
                {"failed", r.stats.failed.size()},
                {"matvec_gflops", r.stats.matvec_flops / r.stats.seconds * 1e-9},
                {"share_of_h200_fp32_peak", r.stats.matvec_flops / r.stats.seconds / kH200Fp32Peak}};
  };
  o.device = Device{};
  rec["cpu"] = one(o);
  rec["cpu"]["threads"] = omp_get_max_threads();
  if (gpu) {
    o.device = Device{DeviceKind::cuda, 0};
    for (DType dt : {DType::f32, DType::f64}) {
      o.dtype = dt;
      rec[std::string("cuda_") + dtype_name(dt)] = one(o);
    }
    rec["gpu_over_cpu_f32"] = rec["cpu"]["seconds"].get<double>() / rec["cuda_float32"]["seconds"].get<double>();
  }
  // Dense reference on one core, on small pairs only.
  double ref_s = 0;
  int done = 0;
  for (size_t i = 0; i < graphs.size() && done < ref_pairs; ++i) {
    const auto& g = graphs[i];
    const auto& h = graphs[(i * 7 + 3) % graphs.size()];
    if (g.num_nodes() * h.num_nodes() > 1600) continue;
    Options ro = o;
    ro.device = Device{};
    const auto t0 = std::chrono::steady_clock::now();
    (void)reference_pair(g, h, ro);
    ref_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++done;
  }
  if (done) {
    rec["dense_reference_pairs_per_second"] = double(done) / ref_s;
    rec["dense_reference_note"] = "sampled pairs with n*n' <= 1600 (smaller than average: ratio is conservative)";
    if (gpu)
      rec["gpu_over_dense_reference"] = rec["cuda_float32"]["pairs_per_second"].get<double>() / (double(done) / ref_s);
  }
  return rec;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app("graph kernel benchmark");
  std::string data = "../shared/data", json_path;
  std::vector<std::string> sets = {"mutag", "ptc_mr", "enzymes", "proteins", "nci1"};
  int limit = 0, synth = 16, synth_min = 1000, synth_max = 3000, ref_pairs = 20;
  double q = 0.05;
  app.add_option("--data", data, "directory holding the TU collections");
  app.add_option("--sets", sets, "TU collections to run");
  app.add_option("--limit", limit, "use only the first N graphs of each collection (0 = all)");
  app.add_option("--synthetic", synth, "number of synthetic protein-like graphs (0 = none)");
  app.add_option("--synthetic-min", synth_min);
  app.add_option("--synthetic-max", synth_max);
  app.add_option("--ref-pairs", ref_pairs, "pairs timed with the dense reference");
  app.add_option("--q", q);
  app.add_option("--json", json_path, "write the records to this JSON file");
  CLI11_PARSE(app, argc, argv);
  const bool gpu = cuda_available();
  Options o;
  o.q = q;
  o.node_kernel = BaseKernel::KroneckerDelta(0.5);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.5);
  json records = json::array();
  for (const auto& s : sets) {
    const std::string dir = data + "/" + s;
    if (!std::filesystem::exists(dir)) {
      std::fprintf(stderr, "skip %s (not found)\n", dir.c_str());
      continue;
    }
    auto col = io::read_tu(dir);
    if (limit > 0 && int(col.graphs.size()) > limit) col.graphs.resize(size_t(limit));
    records.push_back(run_set(s, std::move(col.graphs), o, gpu, ref_pairs));
    std::printf("%s\n", records.back().dump().c_str());
    std::fflush(stdout);
  }
  if (synth > 0) {
    records.push_back(run_set("protein_like_" + std::to_string(synth_min) + "_" + std::to_string(synth_max),
                              protein_like(synth, synth_min, synth_max, 7), o, gpu, 0));
    std::printf("%s\n", records.back().dump().c_str());
  }
  json out = {{"benchmark", "graph_kernel"},
              {"device", gpu ? device_name(Device{DeviceKind::cuda, 0}) : device_name(Device{})},
              {"cpu", device_name(Device{})},
              {"date", std::time(nullptr)},
              {"records", records}};
  if (!json_path.empty()) {
    const std::string tmp = json_path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return 1;
    std::fprintf(f, "%s\n", out.dump(2).c_str());
    std::fclose(f);
    std::filesystem::rename(tmp, json_path);
  }
  return 0;
}
