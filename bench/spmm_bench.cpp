// SpMM kernel benchmark: every eligible registered variant on generated graphs and feature widths,
// checked against the CPU backend before it is timed. Prints time, achieved bandwidth against the
// IO floor (A read once + X read once + Y written once) and, for context, the per-edge gather
// volume E * F * sizeof(T). Writes JSON (date, commit, device, command, results) with --json.
//
//   spmm_bench --json bench/results/spmm_h200.json                  # GPU, the graphs
//   spmm_bench --device cpu --quick                                 # small graphs on the CPU
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/ops/spmm.hpp"
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
  double build_s = 0;
};

GraphCase make_graph(const std::string& name, bool quick) {
  GraphCase c;
  c.name = name;
  const auto t0 = std::chrono::steady_clock::now();
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
  } else {
    fail("spmm_bench: unknown graph '", name, "' (rmat, grid, clustered)");
  }
  const Csr<int64_t> g64 = build_csr(coo);
  // GCN weights: the benchmark moves the bytes of a real normalized layer.
  const Csr<int64_t> norm = ops::normalize(g64.view(), ops::NormOptions{});
  c.g = convert_index<int32_t>(norm);
  c.build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

// max |got - ref| / max |ref| (NaN -> infinity).
double normalized_error(const std::vector<float>& got, const std::vector<float>& ref) {
  double num = 0, den = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(got[i]) - double(ref[i]));
    if (std::isnan(d)) return INFINITY;
    num = std::max(num, d);
    den = std::max(den, std::fabs(double(ref[i])));
  }
  return num / den;
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
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera SpMM kernel benchmark"};
  std::string json_path, device = "auto", index = "int32";
  std::vector<std::string> graphs = {"rmat", "grid", "clustered"};
  std::vector<int64_t> widths = {64, 256, 512};
  std::vector<std::string> only;
  int reps = 10;
  bool quick = false;
  app.add_option("--json", json_path, "write results as JSON to this path");
  app.add_option("--graphs", graphs, "graphs: rmat grid clustered")->delimiter(',');
  app.add_option("--widths", widths, "feature widths")->delimiter(',');
  app.add_option("--variants", only, "only these variants")->delimiter(',');
  app.add_option("--device", device, "auto, cpu or cuda");
  app.add_option("--reps", reps, "timed repetitions (median reported)");
  app.add_flag("--quick", quick, "small graphs (smoke test)");
  CLI11_PARSE(app, argc, argv);

  try {
    Exec exec;
    if (device == "cuda" || (device == "auto" && cuda_available())) exec.device = Device{DeviceKind::cuda, 0};
    TESSERA_CHECK(!exec.device.is_cuda() || cuda_available(), "spmm_bench: no CUDA device");
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    json out = {{"benchmark", "spmm"}, {"date", bench::now_utc()}, {"commit", bench::git_commit()},
                {"device", device_name(exec.device)}, {"command", command}, {"dtype", "float32"},
                {"index", index}, {"floor_definition", "rowptr + col + values read once, X read once, Y written once"},
                {"results", json::array()}, {"graphs", json::array()}};
    const double copy_gbs = bench::copy_bandwidth_gbs(exec);
    out["copy_bandwidth_gbs"] = copy_gbs;
    std::printf("device: %s", device_name(exec.device).c_str());
    if (copy_gbs > 0) std::printf("   copy bandwidth (read + write) %.0f GB/s: column 'of copy' is the floor's share of it", copy_gbs);
    std::printf("\n%-10s %6s %-28s %10s %10s %8s %12s %10s\n", "graph", "F", "variant", "ms", "GB/s", "of copy",
                "gather GB", "max err");

    for (const auto& gname : graphs) {
      GraphCase gc = make_graph(gname, quick);
      const auto& g = gc.g;
      out["graphs"].push_back({{"name", gname}, {"spec", gc.spec}, {"nodes", g.rows}, {"edges", g.nnz()},
                               {"build_and_normalize_s", gc.build_s}});
      std::printf("# %s: %s, %lld nodes, %lld edges (built + normalized in %.2f s)\n", gname.c_str(),
                  gc.spec.c_str(), (long long)g.rows, (long long)g.nnz(), gc.build_s);
#ifdef TESSERA_WITH_CUDA
      std::unique_ptr<DevBuf> d_rowptr, d_col, d_val;
      if (exec.device.is_cuda()) {
        d_rowptr = std::make_unique<DevBuf>(g.rowptr.size() * 4);
        d_col = std::make_unique<DevBuf>(g.col.size() * 4);
        d_val = std::make_unique<DevBuf>(g.values.size() * 4);
        TESSERA_CUDA_CHECK(cudaMemcpy(d_rowptr->p, g.rowptr.data(), g.rowptr.size() * 4, cudaMemcpyHostToDevice));
        TESSERA_CUDA_CHECK(cudaMemcpy(d_col->p, g.col.data(), g.col.size() * 4, cudaMemcpyHostToDevice));
        TESSERA_CUDA_CHECK(cudaMemcpy(d_val->p, g.values.data(), g.values.size() * 4, cudaMemcpyHostToDevice));
      }
#endif
      for (int64_t F : widths) {
        std::mt19937 rng(static_cast<uint32_t>(F));
        std::uniform_real_distribution<float> u(-1, 1);
        Dense<float> X(g.cols, F), Yref(g.rows, F);
        for (auto& v : X.data) v = u(rng);
        const ops::SpmmArgs<int32_t> host_args{g.view(), nullptr, X.view(), Yref.view()};
        ops::spmm(host_args, Exec::cpu(), "cpu.rows");  // the correctness oracle for the timed runs

        ops::SpmmArgs<int32_t> args = host_args;
        std::vector<float> got(Yref.data.size());
        Dense<float> Yhost(g.rows, F);
#ifdef TESSERA_WITH_CUDA
        std::unique_ptr<DevBuf> dX, dY;
        if (exec.device.is_cuda()) {
          dX = std::make_unique<DevBuf>(X.data.size() * 4);
          dY = std::make_unique<DevBuf>(got.size() * 4);
          TESSERA_CUDA_CHECK(cudaMemcpy(dX->p, X.data.data(), X.data.size() * 4, cudaMemcpyHostToDevice));
          args.A.rowptr = static_cast<const int32_t*>(d_rowptr->p);
          args.A.col = static_cast<const int32_t*>(d_col->p);
          args.A.values = static_cast<const float*>(d_val->p);
          args.A.device = exec.device;
          args.X = {dX->p, DType::f32, g.cols, F, F, exec.device};
          args.Y = {dY->p, DType::f32, g.rows, F, F, exec.device};
        }
#endif
        if (!exec.device.is_cuda()) args.Y = Yhost.view();
        const ops::SpmmIo io = ops::spmm_io(args);
        for (const auto* v : ops::spmm_registry<int32_t>().eligible(args, exec.device)) {
          if (v->name == "reference") continue;  // the oracle is too slow for these sizes
          if (!only.empty() && std::find(only.begin(), only.end(), v->name) == only.end()) continue;
          json rec = {{"graph", gname}, {"nodes", g.rows}, {"edges", g.nnz()}, {"width", F}, {"variant", v->name},
                      {"floor_bytes", io.floor_bytes}, {"gather_bytes", io.gather_bytes}};
          try {
            v->run(args, exec);  // first run: per-graph builds (cuSPARSE timing, WSB blocks) happen here
#ifdef TESSERA_WITH_CUDA
            if (exec.device.is_cuda()) {
              TESSERA_CUDA_CHECK(cudaStreamSynchronize(cuda_stream(exec.stream)));
              TESSERA_CUDA_CHECK(cudaMemcpy(got.data(), args.Y.data, got.size() * 4, cudaMemcpyDeviceToHost));
            }
#endif
            if (!exec.device.is_cuda()) got = Yhost.data;
            const double err = normalized_error(got, Yref.data);
            // Reduced-precision variants (fp16/bf16/tf32 tensor-core paths) get a looser bound.
            const bool low = v->name.find("wsb") != std::string::npos;
            const bool ok = err <= (low ? 2e-2 : 1e-4);
            const double ms = tune::time_ms(exec, [&] { v->run(args, exec); }, 2, reps);
            const double gbps = io.floor_bytes / (ms * 1e6);
            rec.update({{"ms", ms}, {"floor_gbps", gbps}, {"max_normalized_error", err}, {"correct", ok}});
            if (copy_gbs > 0) rec["floor_share_of_copy_bandwidth"] = bench::share_of_copy(gbps, copy_gbs);
            std::printf("%-10s %6lld %-28s %10.3f %10.1f %7.1f%% %12.2f %10.2e%s\n", gname.c_str(), (long long)F,
                        v->name.c_str(), ms, gbps, 100.0 * bench::share_of_copy(gbps, copy_gbs),
                        io.gather_bytes / 1e9, err, ok ? "" : "  WRONG");
          } catch (const Error& e) {
            rec["error"] = e.what();
            std::printf("%-10s %6lld %-28s failed: %s\n", gname.c_str(), (long long)F, v->name.c_str(), e.what());
          }
          out["results"].push_back(rec);
        }
      }
    }
    if (!json_path.empty() && !bench::write_json(json_path, out)) return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "spmm_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
