// Marginalized graph kernel benchmark: Gram matrices of TU collections and of synthetic
// protein-like graphs (points in a box, edges between spatial neighbours), CPU vs CUDA in the same
// run, plus the dense reference (one core) on a sample of small pairs. Reports pairs/s, PCG
// iterations, achieved mat-vec FLOP rate (and its share of the H200 fp32 peak), GPU/CPU and
// GPU/dense-reference ratios. --json writes one record per data set.
//
// Two FLOP rates: "useful" counts the direct product, 2 x nnz x nnz' (+ 2 x n n' of vector work)
// per mat-vec, the convention GraphDot's numbers use; "executed" counts what the GPU ran. They
// differ on dense octiles, whose product the CUDA mat-vec factors per edge label
// (A_l X Bt_l^T: 2 x 2 x 512 multiply-adds per tile pair instead of 2 x 4096).
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "tessera/io/graph_io.hpp"
#include "bench_common.hpp"
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

// Dense octiles: nodes on a line, each linked to every node within `band` (weights in (0.5, 1],
// `labels` edge labels at random), so the tiles on and next to the diagonal are full.
std::vector<LabeledGraph> banded(int count, int nmin, int nmax, int band, int labels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> w(0.5f, 1.0f);
  std::vector<LabeledGraph> out;
  for (int g = 0; g < count; ++g) {
    const int n = nmin + int(rng() % uint64_t(std::max(1, nmax - nmin + 1)));
    std::vector<std::vector<std::pair<int, std::pair<float, int32_t>>>> rows(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= std::min(n - 1, i + band); ++j) {
        const std::pair<float, int32_t> e{w(rng), int32_t(rng() % uint64_t(labels))};
        rows[size_t(i)].push_back({j, e});
        rows[size_t(j)].push_back({i, e});
      }
    LabeledGraph lg;
    lg.adj.rows = lg.adj.cols = n;
    lg.adj.rowptr.assign(size_t(n + 1), 0);
    for (int i = 0; i < n; ++i) {
      std::sort(rows[size_t(i)].begin(), rows[size_t(i)].end());
      for (const auto& [j, e] : rows[size_t(i)]) {
        lg.adj.col.push_back(j);
        lg.adj.values.push_back(e.first);
        lg.edge_labels.push_back(e.second);
      }
      lg.adj.rowptr[size_t(i + 1)] = int32_t(lg.adj.col.size());
      lg.node_labels.push_back(int32_t(rng() % 4));
    }
    out.push_back(std::move(lg));
  }
  return out;
}

using Clock = std::chrono::steady_clock;
Clock::time_point g_start;
double g_budget_s = 170;  // whole-run budget: stages that would start after it are skipped
double g_gpu_pairs_per_s = 0;  // last full-Gram f32 rate, to size later sets to the budget
double elapsed() { return std::chrono::duration<double>(Clock::now() - g_start).count(); }

json time_gram(const std::vector<LabeledGraph>& graphs, const Options& oo) {
  const auto t0 = Clock::now();
  const auto r = MarginalizedGraphKernel(oo).gram(graphs);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return json{{"graphs", graphs.size()},
              {"seconds", s},
              {"solve_seconds", r.stats.seconds},
              {"pairs", r.stats.pairs},
              {"pairs_per_second", double(r.stats.pairs) / s},
              {"mean_iterations", r.stats.mean_iterations},
              {"max_iterations", r.stats.max_iterations},
              {"failed", r.stats.failed.size()},
              {"matvec_gflops", r.stats.matvec_flops / r.stats.seconds * 1e-9},
              {"share_of_h200_fp32_peak", r.stats.matvec_flops / r.stats.seconds / kH200Fp32Peak},
              {"matvec_gflops_executed", r.stats.matvec_flops_executed / r.stats.seconds * 1e-9},
              {"share_of_h200_fp32_peak_executed", r.stats.matvec_flops_executed / r.stats.seconds / kH200Fp32Peak},
              {"flop_rate_note", "over the whole solve (mat-vecs, vector updates, launches): a lower bound on the mat-vec's own rate"},
              // Pairs solved by the whole grid: the mat-vec kernels alone (events around each).
              {"matvec_kernel_seconds", r.stats.matvec_kernel_seconds},
              {"matvec_kernel_gflops_executed",
               r.stats.matvec_kernel_seconds > 0 ? r.stats.matvec_kernel_flops_executed / r.stats.matvec_kernel_seconds * 1e-9 : 0.0},
              {"matvec_kernel_share_of_h200_fp32_peak_executed",
               r.stats.matvec_kernel_seconds > 0 ? r.stats.matvec_kernel_flops_executed / r.stats.matvec_kernel_seconds / kH200Fp32Peak : 0.0}};
}

// The full Gram matrix on the GPU (f32, then f64 while the budget allows); the CPU on the first
// `cpu_graphs` graphs only (all of them when the collection is that small), extrapolated to the
// full pair count and labelled so; GPU over CPU both on that same subset and full-vs-extrapolated.
json run_set(const std::string& name, std::vector<LabeledGraph> graphs, Options o, bool gpu, int ref_pairs,
             size_t cpu_graphs) {
  json rec = {{"dataset", name}, {"graphs", graphs.size()}};
  int64_t nodes = 0, max_nodes = 0;
  for (const auto& g : graphs) {
    nodes += g.num_nodes();
    max_nodes = std::max<int64_t>(max_nodes, g.num_nodes());
  }
  rec["mean_nodes"] = graphs.empty() ? 0.0 : double(nodes) / double(graphs.size());
  rec["max_nodes"] = max_nodes;
  const double full_pairs = double(graphs.size()) * double(graphs.size() + 1) / 2;
  rec["full_pairs"] = full_pairs;
  const std::vector<LabeledGraph> subset(graphs.begin(), graphs.begin() + std::ptrdiff_t(std::min(cpu_graphs, graphs.size())));
  o.device = Device{};
  o.dtype = DType::f64;
  rec["cpu_subset"] = time_gram(subset, o);
  rec["cpu_subset"]["threads"] = omp_get_max_threads();
  const double cpu_pair_s = rec["cpu_subset"]["seconds"].get<double>() / rec["cpu_subset"]["pairs"].get<double>();
  rec["cpu_full_seconds_extrapolated"] = cpu_pair_s * full_pairs;
  rec["cpu_note"] = subset.size() == graphs.size()
                        ? "CPU (float64, all threads) measured on the full collection"
                        : "CPU (float64, all threads) measured on the first " + std::to_string(subset.size()) +
                              " graphs; cpu_full_seconds_extrapolated = measured seconds per pair x full pair count (EXTRAPOLATED)";
  if (gpu) {
    o.device = Device{DeviceKind::cuda, 0};
    o.dtype = DType::f32;
    rec["cuda_float32_subset"] = time_gram(subset, o);
    rec["gpu_over_cpu_same_subset_f32"] =
        rec["cpu_subset"]["seconds"].get<double>() / rec["cuda_float32_subset"]["seconds"].get<double>();
    rec["cuda_float32"] = time_gram(graphs, o);
    g_gpu_pairs_per_s = rec["cuda_float32"]["pairs_per_second"].get<double>();
    rec["gpu_full_over_cpu_extrapolated_f32"] =
        rec["cpu_full_seconds_extrapolated"].get<double>() / rec["cuda_float32"]["seconds"].get<double>();
    // f64 only when the f32 run suggests it fits in what is left of the budget (f64 ~2-3x slower).
    if (elapsed() + 3 * rec["cuda_float32"]["seconds"].get<double>() < g_budget_s) {
      o.dtype = DType::f64;
      rec["cuda_float64"] = time_gram(graphs, o);
    } else {
      rec["cuda_float64"] = "skipped: would exceed the benchmark time budget";
    }
  }
  // Dense reference (one core) on a sample of small pairs.
  double ref_s = 0;
  int done = 0;
  for (size_t i = 0; i < graphs.size() && done < ref_pairs; ++i) {
    const auto& g = graphs[i];
    const auto& h = graphs[(i * 7 + 3) % graphs.size()];
    if (g.num_nodes() * h.num_nodes() > 1600) continue;
    Options ro = o;
    ro.device = Device{};
    ro.dtype = DType::f64;
    const auto t0 = Clock::now();
    (void)reference_pair(g, h, ro);
    ref_s += std::chrono::duration<double>(Clock::now() - t0).count();
    ++done;
  }
  if (done) {
    rec["dense_reference_pairs_per_second"] = double(done) / ref_s;
    rec["dense_reference_note"] = "one core, sampled pairs with n*n' <= 1600 (smaller than average: ratio is conservative)";
    if (gpu)
      rec["gpu_over_dense_reference"] = rec["cuda_float32"]["pairs_per_second"].get<double>() / (double(done) / ref_s);
  }
  rec["elapsed_at_end_s"] = elapsed();
  return rec;
}

// How pairs on the grid-wide path run their mat-vec (the variables the CUDA backend reads), and
// how the executed arithmetic is counted: the JSON says which kernels a number belongs to.
json matvec_path() {
  auto env = [](const char* k) { const char* v = std::getenv(k); return std::string(v ? v : ""); };
  const std::string sandwich = env("TESSERA_MGK_SANDWICH"), tf32 = env("TESSERA_MGK_TF32");
  return json{{"TESSERA_MGK_SANDWICH", sandwich},
              {"TESSERA_MGK_TF32", tf32},
              {"fp32_sandwich_stages", tf32 == "0" ? "FFMA (CUDA cores)" : "tf32x3: three tf32 mma terms per multiply-add (tensor cores)"},
              {"executed_flops", "2 per fp32 multiply-add of the algorithm (the direct tile-pair path or the sandwich), "
                                 "whatever unit runs it; shares are of the 67 TFLOP/s fp32 (CUDA-core) peak"}};
}

std::string default_data_dir() {
  if (const char* env = std::getenv("TESSERA_SHARED_DATA")) return env;
  for (const char* c : {"../shared/data", "../../shared/data", "/work/shared/data"})
    if (std::filesystem::exists(c)) return c;
  return "../shared/data";
}
}  // namespace

int main(int argc, char** argv) {
  g_start = Clock::now();
  CLI::App app("graph kernel benchmark (defaults: TU sets + protein-like graphs, about 3 minutes on an H200)");
  std::string data = default_data_dir(), json_path;
  std::vector<std::string> sets = {"mutag", "ptc_mr", "enzymes", "proteins", "nci1"};
  int limit = 0, synth = 12, synth_min = 1000, synth_max = 3000, ref_pairs = 20, cpu_graphs = 64;
  double q = 0.05;
  app.add_option("--data", data, "directory holding the TU collections (default: $TESSERA_SHARED_DATA, ../shared/data)");
  app.add_option("--sets", sets, "TU collections to run");
  app.add_option("--limit", limit, "use only the first N graphs of each collection (0 = all)");
  app.add_option("--cpu-graphs", cpu_graphs, "CPU timed on the first N graphs of each set (extrapolated)");
  app.add_option("--synthetic", synth, "number of synthetic protein-like graphs (0 = none)");
  app.add_option("--synthetic-min", synth_min);
  app.add_option("--synthetic-max", synth_max);
  app.add_option("--ref-pairs", ref_pairs, "pairs timed with the dense reference");
  app.add_option("--budget", g_budget_s, "seconds; optional stages starting later are skipped");
  app.add_option("--q", q);
  int band_graphs = 16;
  bool fit_check = true;
  app.add_option("--fit-check", fit_check, "solve a pair of 3000-node graphs (does it fit?)");
  app.add_option("--dense-band", band_graphs, "dense-tile sets: 8 x N small banded graphs (0 = no dense-tile sets)");
  app.add_option("--json", json_path, "write the records to this JSON file");
  CLI11_PARSE(app, argc, argv);
  const std::string command = bench::command_line(argc, argv);
  const bool gpu = cuda_available();
  Options o;
  o.q = q;
  o.node_kernel = BaseKernel::KroneckerDelta(0.5);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.5);
  json records = json::array();
  json summary = json::object();
  auto emit = [&](json rec) {
    std::printf("%s\n", rec.dump().c_str());
    std::fflush(stdout);
    records.push_back(std::move(rec));
  };
  for (const auto& s : sets) {
    const std::string dir = data + "/" + s;
    if (!std::filesystem::exists(dir)) {
      std::fprintf(stderr, "skip %s (not found)\n", dir.c_str());
      continue;
    }
    if (elapsed() > g_budget_s) {
      emit(json{{"dataset", s}, {"skipped", "benchmark time budget exhausted"}});
      continue;
    }
    auto col = io::read_tu(dir);
    if (limit > 0 && int(col.graphs.size()) > limit) col.graphs.resize(size_t(limit));
    // Keep the whole run near the budget: a set whose full Gram would take more than a third of
    // what is left (at the last measured GPU rate) is cut to its first graphs, and says so.
    size_t keep = col.graphs.size();
    const double allow = (g_budget_s - elapsed()) / 3;
    while (gpu && g_gpu_pairs_per_s > 0 && keep > 64 && double(keep) * double(keep + 1) / 2 / g_gpu_pairs_per_s > allow)
      keep = keep * 9 / 10;
    const size_t original = col.graphs.size();
    col.graphs.resize(keep);
    auto rec = run_set(s, std::move(col.graphs), o, gpu, ref_pairs, size_t(cpu_graphs));
    if (keep < original) {
      rec["limited_to_first_graphs"] = keep;
      rec["note_limit"] = "collection has " + std::to_string(original) + " graphs; cut to fit the time budget";
    }
    if (s == "proteins" && gpu) {
      summary["proteins_full_gram_seconds_cuda_f32"] = rec["cuda_float32"]["seconds"];
      summary["proteins_target_under_3s_met"] = rec["cuda_float32"]["seconds"].get<double>() < 3.0;
      summary["proteins_pairs_per_second_cuda_f32"] = rec["cuda_float32"]["pairs_per_second"];
      summary["proteins_cpu_full_seconds_extrapolated"] = rec["cpu_full_seconds_extrapolated"];
    }
    emit(std::move(rec));
  }
  // 3000-node graphs: does a pair fit (GraphDot runs out of memory here)? Two graphs, 3 pairs.
  if (gpu && fit_check && elapsed() < g_budget_s) {
    Options big = o;
    big.device = Device{DeviceKind::cuda, 0};
    const auto gs = protein_like(2, 3000, 3000, 11);
    json rec = {{"dataset", "protein_like_3000_pair"}};
    for (DType dt : {DType::f32, DType::f64}) {
      big.dtype = dt;
      try {
        rec[std::string("cuda_") + dtype_name(dt)] = time_gram(gs, big);
        rec[std::string("fits_in_memory_") + dtype_name(dt)] = true;
      } catch (const std::exception& e) {
        rec[std::string("fits_in_memory_") + dtype_name(dt)] = false;
        rec[std::string("error_") + dtype_name(dt)] = e.what();
      }
    }
    summary["graphs_3000_nodes_fit"] = rec["fits_in_memory_float32"];
    emit(std::move(rec));
  }
  if (synth > 0 && elapsed() < g_budget_s) {
    // Smallest first: the CPU is timed on the smallest graph's self pair only (a large pair takes
    // the CPU tens of seconds), so its per-pair extrapolation UNDERSTATES the CPU time.
    auto gs = protein_like(synth, synth_min, synth_max, 7);
    std::stable_sort(gs.begin(), gs.end(), [](const LabeledGraph& a, const LabeledGraph& b) { return a.num_nodes() < b.num_nodes(); });
    auto rec = run_set("protein_like_" + std::to_string(synth_min) + "_" + std::to_string(synth_max), std::move(gs), o,
                       gpu, 0, 1);
    rec["cpu_note_synthetic"] = "CPU timed on the smallest graph's self pair only: extrapolated CPU time is an underestimate";
    emit(std::move(rec));
  }
  // Dense octiles: the dense-tile mat-vec rate. "huge" and "large": two 6144- or 2048-node graphs,
  // whose pairs run the grid-wide mat-vec kernels (timed alone as well); "small": 128 graphs of
  // 40-120 nodes through the persistent kernel (whole solve only). One edge label, then two.
  for (const char* kind : {"huge", "large", "small"})
    for (int labels : {1, 2}) {
      if (!(gpu && band_graphs > 0 && elapsed() < g_budget_s)) break;
      Options bo = o;
      bo.device = Device{DeviceKind::cuda, 0};
      bo.dtype = DType::f32;
      const std::string k = kind;
      const auto gs = k == "huge"    ? banded(2, 6144, 6144, 12, labels, 4)
                      : k == "large" ? banded(2, 2048, 2048, 12, labels, 5)
                                     : banded(8 * band_graphs, 40, 120, 12, labels, 6);
      const std::string name = std::string("dense_band12_") + kind + "_" + std::to_string(labels) + "label";
      json rec = {{"dataset", name}, {"graphs", gs.size()}};
      rec["cuda_float32"] = time_gram(gs, bo);
      summary[name + "_share_of_fp32_peak_useful"] = rec["cuda_float32"]["share_of_h200_fp32_peak"];
      summary[name + "_share_of_fp32_peak_executed"] = rec["cuda_float32"]["share_of_h200_fp32_peak_executed"];
      if (k != "small")
        summary[name + "_matvec_kernel_share_of_fp32_peak_executed"] =
            rec["cuda_float32"]["matvec_kernel_share_of_h200_fp32_peak_executed"];
      emit(std::move(rec));
    }
  summary["total_seconds"] = elapsed();
  json out = {{"benchmark", "graph_kernel"},
              {"device", gpu ? device_name(Device{DeviceKind::cuda, 0}) : device_name(Device{})},
              {"cpu", device_name(Device{})},
              {"h200_fp32_peak_flops", kH200Fp32Peak},
              {"date", tessera::bench::now_utc()},
              {"commit", tessera::bench::git_commit()},
              {"command", command},
              {"large_pair_matvec", matvec_path()},
              {"summary", summary},
              {"records", records}};
  std::printf("summary %s\n", summary.dump().c_str());
  if (!json_path.empty() && !bench::write_json(json_path, out)) return 1;
  return 0;
}
