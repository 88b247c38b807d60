// WSB tensor-core SpMM benchmark: what the format costs and when it pays.
//
// Per graph (GCN-normalized, self-loops added, as the layer uses it): host build time and bytes
// of the format against the CSR, fill and column reuse. On a GPU, per operand type (tf32 for
// fp32, fp16, bf16) and feature width: the cold build + upload time, the WSB SpMM time, the time
// of the best CSR variant of the same dtype measured in the same run, the gain per epoch
// (`--calls` SpMMs per epoch: forward + backward of each layer) and the break-even number of
// epochs = build / gain per epoch. Outputs are checked against the CPU backend before timing.
//
//   spmm_wsb_bench --json bench/results/spmm_wsb_h200.json
//   spmm_wsb_bench --quick                         # small graphs (CPU part only without a GPU)
//   spmm_wsb_bench --graphs grid,clustered         # a subset of the graphs
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tessera/core/device.hpp"
#include "bench_common.hpp"
#include "tessera/core/error.hpp"
#include "tessera/format/wsb.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/ops/spmm.hpp"
#include "tessera/tune/tuner.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>

#include "tessera/core/cuda_check.hpp"
#endif

using namespace tessera;
using json = nlohmann::json;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct GraphCase {
  std::string name;
  Csr<int32_t> g;  // GCN-normalized
};

GraphCase make_case(const std::string& name, const std::string& spec) {
  Csr<int64_t> raw = gen::generate(spec);
  ops::NormOptions norm;
  Csr<int64_t> a = ops::normalize(raw.view(), norm);
  return {name, convert_index<int32_t>(a)};
}

size_t csr_bytes(const Csr<int32_t>& g) {
  return g.rowptr.size() * 4 + g.col.size() * 4 + g.values.size() * 4;
}

#ifdef TESSERA_WITH_CUDA
struct DeviceBuf {
  void* p = nullptr;
  DeviceBuf(const void* host, size_t n, cudaStream_t s) {
    if (!n) return;
    TESSERA_CUDA_CHECK(cudaMalloc(&p, n));
    if (host) TESSERA_CUDA_CHECK(cudaMemcpyAsync(p, host, n, cudaMemcpyHostToDevice, s));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  ~DeviceBuf() {
    if (p) cudaFree(p);
  }
};

template <class T>
std::vector<T> random_features(int64_t rows, int64_t F, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> v(size_t(rows * F));
  for (auto& x : v) x = T(u(rng));
  return v;
}

// Max |got - want| / (max |want| + tiny) of a device result against the CPU backend.
template <class T>
double rel_error(const Csr<int32_t>& g, const std::vector<T>& X, int64_t F, const void* dY, cudaStream_t s) {
  std::vector<T> got(size_t(g.rows * F)), want(size_t(g.rows * F));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(got.data(), dY, got.size() * sizeof(T), cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  const DType dt = dtype_of<T>::value;
  ops::SpmmArgs<int32_t> a{g.view(), nullptr, DenseView{const_cast<T*>(X.data()), dt, g.cols, F, F, Device{}},
                           DenseView{want.data(), dt, g.rows, F, F, Device{}}};
  ops::spmm(a, Exec::cpu(), "cpu.rows");
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = float(want[i]), d = std::abs(double(float(got[i])) - w);
    err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
    scale = std::max(scale, std::abs(w));
  }
  return err / scale;
}

template <class T>
json gpu_case(const GraphCase& gc, int64_t F, const std::string& wsb_variant, int calls, int reps) {
  const DType dt = dtype_of<T>::value;
  Exec ex;
  ex.device = Device{DeviceKind::cuda, 0};
  const cudaStream_t s = cuda_stream(ex.stream);
  const Csr<int32_t>& g = gc.g;
  DeviceBuf rowptr(g.rowptr.data(), g.rowptr.size() * 4, s), col(g.col.data(), g.col.size() * 4, s),
      val(g.values.data(), g.values.size() * 4, s);
  CsrView<int32_t> A = g.view();
  A.rowptr = static_cast<const int32_t*>(rowptr.p);
  A.col = static_cast<const int32_t*>(col.p);
  A.values = static_cast<const float*>(val.p);
  A.device = ex.device;
  const auto X = random_features<T>(g.cols, F, 7);
  DeviceBuf dX(X.data(), X.size() * sizeof(T), s), dY(nullptr, size_t(g.rows * F) * sizeof(T), s);
  ops::SpmmArgs<int32_t> a{A, nullptr, DenseView{dX.p, dt, g.cols, F, F, ex.device},
                           DenseView{dY.p, dt, g.rows, F, F, ex.device}};

  json r = {{"graph", gc.name}, {"dtype", dtype_name(dt)}, {"width", F}, {"variant", wsb_variant}};
  auto& reg = ops::spmm_registry<int32_t>();
  if (!reg.get(wsb_variant).eligible(a)) {
    r["skipped"] = "not eligible";
    return r;
  }
  format::wsb_device_cache_clear();
  const auto t0 = std::chrono::steady_clock::now();
  const format::WsbDeviceInfo info = format::wsb_prepare_device(A, dt, ex);
  const double build_ms = ms_since(t0);
  const double wsb_ms = tune::time_ms(ex, [&] { ops::spmm(a, ex, wsb_variant); }, 3, reps);
  r["wsb_error"] = rel_error(g, X, F, dY.p, s);

  // Best CSR variant of this dtype, same run.
  std::string best;
  double best_ms = std::numeric_limits<double>::infinity();
  json others = json::object();
  for (const auto* v : reg.eligible(a, ex.device)) {
    if (v->name.rfind("cuda.wsb.", 0) == 0) continue;
    const double t = tune::time_ms(ex, [&] { v->run(a, ex); }, 3, reps);
    others[v->name] = t;
    if (t < best_ms) best_ms = t, best = v->name;
  }
  const double gain_epoch = (best_ms - wsb_ms) * calls;
  // IO floor of the WSB pass: format + gathered feature rows + Y written once.
  const double bytes = double(info.stats.device_bytes()) +
                       double(info.stats.distinct_cols) * double(F) * sizeof(T) + double(g.rows * F) * sizeof(T);
  r.update({{"build_upload_ms", build_ms},
            {"wsb_ms", wsb_ms},
            {"wsb_gbps", bytes / (wsb_ms * 1e6)},
            {"csr_best", best},
            {"csr_best_ms", best_ms},
            {"csr_all_ms", others},
            {"speedup", best_ms / wsb_ms},
            {"gain_ms_per_epoch", gain_epoch},
            {"break_even_epochs", gain_epoch > 0 ? json(build_ms / gain_epoch) : json("never")}});
  return r;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"WSB tensor-core SpMM: build cost, memory, per-epoch gain, break-even epochs"};
  bool quick = false;
  std::string json_path;
  std::vector<int64_t> widths = {64, 256, 512};
  int calls = 4, reps = 10;
  std::vector<std::string> only;
  app.add_flag("--quick", quick, "small graphs");
  app.add_option("--graphs", only, "run only these of rmat, grid, clustered (default: all)")->delimiter(',');
  app.add_option("--json", json_path, "write results here");
  app.add_option("--widths", widths, "feature widths");
  app.add_option("--calls", calls, "SpMM calls per epoch (2-layer GCN: 2 forward + 2 backward)");
  app.add_option("--reps", reps, "timed repetitions (median)");
  CLI11_PARSE(app, argc, argv);
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);

  try {
    const std::vector<std::pair<std::string, std::string>> specs =
        quick ? std::vector<std::pair<std::string, std::string>>{{"rmat", "rmat:scale=14,degree=16,seed=1"},
                                                                 {"grid", "grid:rows=128,cols=128"},
                                                                 {"clustered", "clustered:nodes=4096,clusters=16,degree=200,seed=1"}}
              : std::vector<std::pair<std::string, std::string>>{
                    {"rmat", bench::generated_graph_spec("rmat")},
                    {"grid", bench::generated_graph_spec("grid")},
                    {"clustered", bench::generated_graph_spec("clustered")}};
    for (const auto& n : only)
      TESSERA_CHECK(std::any_of(specs.begin(), specs.end(), [&](const auto& s) { return s.first == n; }),
                    "--graphs: unknown graph '", n, "' (known: rmat, grid, clustered)");
    json results = json::array();
    for (const auto& [name, spec] : specs) {
      if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
      const GraphCase gc = make_case(name, spec);
      json gr = {{"graph", name}, {"spec", spec}, {"nodes", gc.g.rows}, {"edges", gc.g.nnz()},
                 {"csr_bytes", csr_bytes(gc.g)}};
      for (DType dt : {DType::f16, DType::f32}) {
        format::WsbStats st;
        if (dt == DType::f16) st = format::build_wsb<int32_t, half_t>(gc.g.view()).stats;
        else st = format::build_wsb<int32_t, float>(gc.g.view()).stats;
        std::printf("%-10s tiles=%-8s build %8.1f ms  format %8.1f MiB (CSR %6.1f MiB)  blocks %lld fill %.3f reuse %.2f\n",
                    name.c_str(), dtype_name(dt), st.build_ms, st.device_bytes() / 1048576.0,
                    csr_bytes(gc.g) / 1048576.0, static_cast<long long>(st.blocks), st.fill, st.column_reuse);
        gr[std::string("host_build_") + dtype_name(dt)] = json::parse(st.to_json());
      }
#ifdef TESSERA_WITH_CUDA
      if (cuda_available()) {
        json runs = json::array();
        for (int64_t F : widths) {
          runs.push_back(gpu_case<float>(gc, F, "cuda.wsb.tf32", calls, reps));
          runs.push_back(gpu_case<half_t>(gc, F, "cuda.wsb.f16", calls, reps));
          runs.push_back(gpu_case<bf16_t>(gc, F, "cuda.wsb.bf16", calls, reps));
          for (size_t i = runs.size() - 3; i < runs.size(); ++i) std::printf("  %s\n", runs[i].dump().c_str());
        }
        gr["gpu"] = runs;
      }
#endif
      results.push_back(gr);
    }
    if (!json_path.empty()) {
      json out = {{"benchmark", "spmm_wsb"}, {"date", bench::now_utc()}, {"commit", bench::git_commit()},
                  {"device", device_name(cuda_available() ? Device{DeviceKind::cuda, 0} : Device{})},
                  {"command", command}, {"results", results}};
      if (!bench::write_json(json_path, out)) return 1;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "spmm_wsb_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
