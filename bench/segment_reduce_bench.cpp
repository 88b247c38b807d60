// Segment-reduce (SAGE aggregation) kernel benchmark: every eligible registered variant on the
// issue's graphs (R-MAT 2^20 deg 16, grid 2^20, clustered 2^16 deg ~200) and on an R-MAT skew sweep,
// widths 64..512. Each variant is checked against the CPU backend (args exactly, values within
// 1e-5 normalized) before it is timed. Reports time, achieved bandwidth against the IO floor
// (rowptr + col read once, the E x F gathered feature rows, Y and arg written once), the graph's
// degree skewness, and the gain of the best degree-aware split over the best no-split variant.
//
//   segment_reduce_bench --json bench/results/segment_reduce_h200.json        # GPU
//   segment_reduce_bench --device cpu --quick                                # smoke test here
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/graph/stats.hpp"
#include "tessera/ops/segment_reduce.hpp"
#include "tessera/tune/tuner.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>

#include "tessera/core/cuda_check.hpp"
#endif

using namespace tessera;
using json = nlohmann::json;

namespace {
struct GraphCase {
  std::string name, spec;
  Csr<int32_t> g;
  GraphStats stats;
};

// Graph names: rmat, grid, clustered, and skew:<a> (R-MAT scale 18 deg 16 with quadrant weight a;
// larger a = more skewed in-degrees) for the split-vs-no-split sweep.
GraphCase make_graph(const std::string& name, bool quick) {
  GraphCase c;
  c.name = name;
  Coo<int64_t> coo;
  if (name == "rmat") {
    const int scale = quick ? 14 : 20;
    c.spec = "rmat scale " + std::to_string(scale) + " degree 16";
    coo = gen::rmat(scale, 16, 1);
  } else if (name == "grid") {
    const int64_t side = quick ? 128 : 1024;
    c.spec = "grid " + std::to_string(side) + "x" + std::to_string(side);
    coo = gen::grid2d(side, side);
  } else if (name == "clustered") {
    const int64_t n = quick ? 4096 : 65536;
    c.spec = "clustered n " + std::to_string(n) + " degree 200";
    coo = gen::clustered(n, n / 256, 200, 0.9, 1);
  } else if (name.rfind("skew:", 0) == 0) {
    const double a = std::stod(name.substr(5));
    TESSERA_CHECK(a > 0.25 && a < 0.95, "segment_reduce_bench: skew weight ", a, " outside (0.25, 0.95)");
    const double rest = (1 - a) / 3;
    const int scale = quick ? 13 : 18;
    c.spec = "rmat scale " + std::to_string(scale) + " degree 16 a=" + std::to_string(a);
    coo = gen::rmat(scale, 16, 7, a, rest, rest);
  } else {
    fail("segment_reduce_bench: unknown graph '", name, "' (rmat, grid, clustered, skew:<a>)");
  }
  c.g = convert_index<int32_t>(build_csr(coo));
  c.stats = graph_stats(c.g.view());
  return c;
}

#ifdef TESSERA_WITH_CUDA
struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t bytes) { TESSERA_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};
#endif

// max |got - ref| / max |ref| and the number of arg mismatches.
std::pair<double, int64_t> compare(const std::vector<float>& got, const std::vector<float>& ref,
                                   const std::vector<int64_t>& garg, const std::vector<int64_t>& rarg) {
  double num = 0, den = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(got[i]) - double(ref[i]));
    if (std::isnan(d)) return {INFINITY, 0};
    num = std::max(num, d);
    den = std::max(den, std::fabs(double(ref[i])));
  }
  int64_t bad = 0;
  for (size_t i = 0; i < rarg.size(); ++i) bad += garg[i] != rarg[i];
  return {num / den, bad};
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera segment-reduce (SAGE aggregation) kernel benchmark"};
  std::string json_path, device = "auto", reduce = "max";
  std::vector<std::string> graphs = {"rmat", "grid", "clustered", "skew:0.45", "skew:0.57", "skew:0.65", "skew:0.75"};
  std::vector<int64_t> widths = {64, 128, 256, 512};
  std::vector<std::string> only;
  int reps = 10;
  bool quick = false;
  app.add_option("--json", json_path, "write results as JSON to this path");
  app.add_option("--graphs", graphs, "graphs: rmat grid clustered skew:<a>")->delimiter(',');
  app.add_option("--widths", widths, "feature widths")->delimiter(',');
  app.add_option("--reduce", reduce, "max, min, sum or mean");
  app.add_option("--variants", only, "only these variants")->delimiter(',');
  app.add_option("--device", device, "auto, cpu or cuda");
  app.add_option("--reps", reps, "timed repetitions (median reported)");
  app.add_flag("--quick", quick, "small graphs (smoke test)");
  CLI11_PARSE(app, argc, argv);

  try {
    const ops::Reduce red = ops::parse_reduce(reduce);
    Exec exec;
    if (device == "cuda" || (device == "auto" && cuda_available())) exec.device = Device{DeviceKind::cuda, 0};
    TESSERA_CHECK(!exec.device.is_cuda() || cuda_available(), "segment_reduce_bench: no CUDA device");
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    json out = {{"benchmark", "segment_reduce"}, {"date", bench::now_utc()}, {"commit", bench::git_commit()},
                {"device", device_name(exec.device)}, {"command", command}, {"dtype", "float32"},
                {"index", "int32"}, {"reduce", reduce},
                {"floor_definition", "rowptr + col read once, E x F gathered X rows, Y (+ int64 arg) written once"},
                {"results", json::array()}, {"graphs", json::array()}, {"split_gain", json::array()}};
    const double copy_gbs = bench::copy_bandwidth_gbs(exec);
    out["copy_bandwidth_gbs"] = copy_gbs;
    std::printf("device: %s   reduce: %s", device_name(exec.device).c_str(), reduce.c_str());
    if (copy_gbs > 0) std::printf("   copy bandwidth (read + write) %.0f GB/s: column 'of copy' is the floor's share of it", copy_gbs);
    std::printf("\n%-12s %6s %-24s %10s %10s %8s %10s\n", "graph", "F", "variant", "ms", "GB/s", "of copy", "max err");

    for (const auto& gname : graphs) {
      GraphCase gc = make_graph(gname, quick);
      const auto& g = gc.g;
      out["graphs"].push_back({{"name", gname}, {"spec", gc.spec}, {"nodes", g.rows}, {"edges", g.nnz()},
                               {"degree_max", gc.stats.degree_max}, {"degree_mean", gc.stats.degree_mean},
                               {"degree_skewness", gc.stats.degree_skewness}});
      std::printf("# %s: %s, %lld nodes, %lld edges, max degree %lld, degree skewness %.1f\n", gname.c_str(),
                  gc.spec.c_str(), (long long)g.rows, (long long)g.nnz(), (long long)gc.stats.degree_max,
                  gc.stats.degree_skewness);
#ifdef TESSERA_WITH_CUDA
      std::unique_ptr<DevBuf> d_rowptr, d_col;
      if (exec.device.is_cuda()) {
        d_rowptr = std::make_unique<DevBuf>(g.rowptr.size() * 4);
        d_col = std::make_unique<DevBuf>(g.col.size() * 4);
        TESSERA_CUDA_CHECK(cudaMemcpy(d_rowptr->p, g.rowptr.data(), g.rowptr.size() * 4, cudaMemcpyHostToDevice));
        TESSERA_CUDA_CHECK(cudaMemcpy(d_col->p, g.col.data(), g.col.size() * 4, cudaMemcpyHostToDevice));
      }
#endif
      for (int64_t F : widths) {
        std::mt19937 rng{uint32_t(F)};
        std::uniform_real_distribution<float> u(-1, 1);
        Dense<float> X(g.cols, F), Yref(g.rows, F), Yhost(g.rows, F);
        for (auto& v : X.data) v = u(rng);
        std::vector<int64_t> argref(size_t(g.rows * F)), arghost(argref.size()), got_arg(argref.size());
        ops::SegmentReduceArgs<int32_t> host_args{g.view(), red, X.view(), Yref.view(),
                                                  ops::has_arg(red) ? argref.data() : nullptr};
        ops::segment_reduce(host_args, Exec::cpu(), "cpu");  // the oracle for the timed runs
        auto args = host_args;
        args.Y = Yhost.view();
        args.arg = ops::has_arg(red) ? arghost.data() : nullptr;
        std::vector<float> got(Yref.data.size());
#ifdef TESSERA_WITH_CUDA
        std::unique_ptr<DevBuf> dX, dY, dArg;
        if (exec.device.is_cuda()) {
          dX = std::make_unique<DevBuf>(X.data.size() * 4);
          dY = std::make_unique<DevBuf>(got.size() * 4);
          dArg = std::make_unique<DevBuf>(argref.size() * 8);
          TESSERA_CUDA_CHECK(cudaMemcpy(dX->p, X.data.data(), X.data.size() * 4, cudaMemcpyHostToDevice));
          args.A.rowptr = static_cast<const int32_t*>(d_rowptr->p);
          args.A.col = static_cast<const int32_t*>(d_col->p);
          args.A.device = exec.device;
          args.X = {dX->p, DType::f32, g.cols, F, F, exec.device};
          args.Y = {dY->p, DType::f32, g.rows, F, F, exec.device};
          args.arg = ops::has_arg(red) ? static_cast<int64_t*>(dArg->p) : nullptr;
        }
#endif
        const double floor = ops::segment_reduce_io_bytes(args);
        double best_split = INFINITY, best_none = INFINITY;
        for (const auto* v : ops::segment_reduce_registry<int32_t>().eligible(args, exec.device)) {
          if (v->name == "reference") continue;
          if (!only.empty() && std::find(only.begin(), only.end(), v->name) == only.end()) continue;
          json rec = {{"graph", gname}, {"nodes", g.rows}, {"edges", g.nnz()}, {"width", F}, {"variant", v->name},
                      {"floor_bytes", floor}, {"degree_skewness", gc.stats.degree_skewness}};
          try {
            v->run(args, exec);  // first run builds the per-graph heavy/light partition
#ifdef TESSERA_WITH_CUDA
            if (exec.device.is_cuda()) {
              TESSERA_CUDA_CHECK(cudaStreamSynchronize(cuda_stream(exec.stream)));
              TESSERA_CUDA_CHECK(cudaMemcpy(got.data(), args.Y.data, got.size() * 4, cudaMemcpyDeviceToHost));
              if (args.arg)
                TESSERA_CUDA_CHECK(cudaMemcpy(got_arg.data(), args.arg, got_arg.size() * 8, cudaMemcpyDeviceToHost));
            }
#endif
            if (!exec.device.is_cuda()) {
              got = Yhost.data;
              got_arg = arghost;
            }
            const auto [err, bad_args] = compare(got, Yref.data, ops::has_arg(red) ? got_arg : argref, argref);
            const bool ok = err <= 1e-5 && bad_args == 0;
            const double ms = tune::time_ms(exec, [&] { v->run(args, exec); }, 2, reps);
            const double gbps = floor / (ms * 1e6);
            rec.update({{"ms", ms}, {"floor_gbps", gbps}, {"max_normalized_error", err}, {"arg_mismatches", bad_args},
                        {"correct", ok}});
            if (copy_gbs > 0) rec["floor_share_of_copy_bandwidth"] = bench::share_of_copy(gbps, copy_gbs);
            if (v->name.find(".none.") != std::string::npos) best_none = std::min(best_none, ms);
            else if (v->backend == tune::Backend::cuda) best_split = std::min(best_split, ms);
            std::printf("%-12s %6lld %-24s %10.3f %10.1f %7.1f%% %10.2e%s\n", gname.c_str(), (long long)F,
                        v->name.c_str(), ms, gbps, 100.0 * bench::share_of_copy(gbps, copy_gbs), err,
                        ok ? "" : "  WRONG");
          } catch (const Error& e) {
            rec["error"] = e.what();
            std::printf("%-12s %6lld %-24s failed: %s\n", gname.c_str(), (long long)F, v->name.c_str(), e.what());
          }
          out["results"].push_back(rec);
        }
        if (std::isfinite(best_split) && std::isfinite(best_none)) {
          out["split_gain"].push_back({{"graph", gname}, {"width", F}, {"degree_skewness", gc.stats.degree_skewness},
                                       {"best_split_ms", best_split}, {"best_no_split_ms", best_none},
                                       {"gain", best_none / best_split}});
          std::printf("%-12s %6lld split gain %.2fx (skewness %.1f)\n", gname.c_str(), (long long)F,
                      best_none / best_split, gc.stats.degree_skewness);
        }
      }
    }
    if (!json_path.empty() && !bench::write_json(json_path, out)) return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "segment_reduce_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
