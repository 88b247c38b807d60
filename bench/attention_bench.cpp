// Fused attention benchmark (GATv2 and Graph Transformer): forward and forward+backward time of
// the fused kernels on a generated graph, per (heads, channels), with achieved bandwidth against
// the IO floor (each input row read once, the CSR read once, out and lse written once; backward:
// inputs, dout and lse read once, gradients written once, transpose read once), and the forward
// against the floor (source rows read once per edge: what a kernel without reuse through
// the caches must move). The result is
// checked against the reference backend on a small graph first (--verify). JSON with --json.
//
//   attention_bench --device cuda --spec rmat:scale=20,degree=16 --hc 4x64,8x128,2x256
//   attention_bench --device cpu --spec rmat:scale=16,degree=16 --hc 4x32
//   attention_bench --device cuda --spec ba:nodes=19717,m=2 --hc 8x128 --shared-kv   (the folded layer's)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "gen/rng.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/ops/attention.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>

#include "tessera/core/cuda_check.hpp"
#endif

using namespace tessera;
using namespace tessera::ops;
using json = nlohmann::json;

namespace {

struct Mem {  // a buffer on the benchmark's device
  Device dev;
  void* p = nullptr;
  std::vector<char> host;
  Mem(Device d, size_t bytes, const void* init = nullptr) : dev(d) {
    if (!d.is_cuda()) {
      host.resize(bytes + 64);
      p = host.data();
      if (init) std::memcpy(p, init, bytes);
      return;
    }
#ifdef TESSERA_WITH_CUDA
    TESSERA_CUDA_CHECK(cudaMalloc(&p, bytes + 64));
    if (init) TESSERA_CUDA_CHECK(cudaMemcpy(p, init, bytes, cudaMemcpyHostToDevice));
#endif
  }
  ~Mem() {
#ifdef TESSERA_WITH_CUDA
    if (dev.is_cuda()) cudaFree(p);
#endif
  }
};

void sync(const Device& d) {
#ifdef TESSERA_WITH_CUDA
  if (d.is_cuda()) TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
#endif
}

double median_ms(const Device& d, int reps, const std::function<void()>& fn) {
  return bench::median_ms(reps, fn, [&] { sync(d); });
}

struct Run {
  double fwd_ms = 0, fwdbwd_ms = 0, fwd_floor_bytes = 0, bwd_floor_bytes = 0, fwd_edge_floor_bytes = 0;
};

// Times one (kind, H, C) on graph g (int32 indices), float32 features. shared_kv (the Transformer):
// one C-wide row per source that is every head's key and value (kv_heads = 1, the folded
// TransformerConv's attention over x_src).
Run bench_one(const Csr<int32_t>& g, AttentionKind kind, int64_t H, int64_t C, const Device& dev, int reps,
              bool shared_kv) {
  const int64_t W = H * C, N = g.rows, S = g.cols, KW = shared_kv ? C : W;
  // Inputs uniform in [-1, 1) from counter-based streams, filled in parallel: at the GPU
  // configuration (2^20 rows x H*C = 1024) each array is 2^30 values: a sequential mt19937 took
  // seconds per array and minutes per run (the H200 run of 2026-12-01 hit its 100 s limit).
  uint64_t stream = 0;
  auto rnd = [&](int64_t n) {
    const gen::detail::Stream s(42, ++stream);
    std::vector<float> v(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(2 * s.uniform(uint64_t(i)) - 1);
    return v;
  };
  const auto q = rnd(N * W), k = rnd(S * KW), v = rnd(S * KW), dout = rnd(N * W), att = rnd(W);
  Mem rowptr(dev, g.rowptr.size() * 4, g.rowptr.data()), col(dev, g.col.size() * 4 + 4, g.col.data());
  Mem bq(dev, q.size() * 4, q.data()), bk(dev, k.size() * 4, k.data()), bv(dev, v.size() * 4, v.data());
  Mem bdo(dev, dout.size() * 4, dout.data()), batt(dev, att.size() * 4, att.data());
  Mem out(dev, q.size() * 4), lse(dev, size_t(N * H) * 4), dq(dev, q.size() * 4), dk(dev, k.size() * 4),
      dv(dev, v.size() * 4), datt(dev, att.size() * 4);
  Mem tptr(dev, size_t(S + 1) * 4), trow(dev, g.col.size() * 4 + 4), tperm(dev, g.col.size() * 4 + 4);
  Exec exec;
  exec.device = dev;
  AttentionArgs<int32_t> a;
  a.kind = kind;
  a.A = CsrView<int32_t>{N, S, g.nnz(), static_cast<int32_t*>(rowptr.p), static_cast<int32_t*>(col.p), nullptr, dev, g.id};
  a.heads = H;
  a.channels = C;
  a.query = {bq.p, DType::f32, N, W, W, dev};
  a.kv_heads = shared_kv ? 1 : 0;
  a.key = {bk.p, DType::f32, S, KW, KW, dev};
  if (kind == AttentionKind::transformer) a.value = shared_kv ? a.key : DenseView{bv.p, DType::f32, S, KW, KW, dev};
  else a.att = batt.p;
  a.out = {out.p, DType::f32, N, W, W, dev};
  a.lse = lse.p;
  build_attention_transpose(a.A, static_cast<int32_t*>(tptr.p), static_cast<int32_t*>(trow.p),
                            static_cast<int32_t*>(tperm.p), exec);
  AttentionTransposeView<int32_t> tv{S, g.nnz(), static_cast<int32_t*>(tptr.p), static_cast<int32_t*>(trow.p),
                                     static_cast<int32_t*>(tperm.p), dev};
  AttentionBackwardArgs<int32_t> b;
  b.fwd = a;
  b.dout = {bdo.p, DType::f32, N, W, W, dev};
  b.dquery = {dq.p, DType::f32, N, W, W, dev};
  b.dkey = {dk.p, DType::f32, S, KW, KW, dev};
  if (kind == AttentionKind::transformer) b.dvalue = {dv.p, DType::f32, S, KW, KW, dev};
  else b.datt = datt.p;
  b.transpose = &tv;
  Run r;
  r.fwd_ms = median_ms(dev, reps, [&] { attention_forward(a, exec); });
  r.fwdbwd_ms = median_ms(dev, reps, [&] {
    attention_forward(a, exec);
    attention_backward(b, exec);
  });
  const double f = 4, nv = kind == AttentionKind::transformer && !shared_kv ? 2 : 1;  // key (+ value) rows
  const double SW = double(S * KW);  // a key (or value) table
  const double csr = double(N + 1 + g.nnz()) * 4;
  r.fwd_floor_bytes = f * double(N * W) + f * nv * SW + csr + f * double(N * W) + f * double(N * H);
  r.fwd_edge_floor_bytes = r.fwd_floor_bytes - f * nv * SW + f * nv * double(g.nnz()) * double(KW);
  // backward: q, dout, lse in; k (+v) in; dq, dk (+dv) out; A and its transpose (with perm)
  r.bwd_floor_bytes = f * double(2 * N * W + N * H) + f * nv * SW + f * double(N * W) + f * nv * SW + csr +
                      double(S + 1 + 2 * g.nnz()) * 4;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fused attention benchmark"};
  // Defaults fit the machine: `attention_bench --json PATH` alone runs the GPU configuration
  // (R-MAT 2^20, deg 16; (H, C) in {(4,64),(8,128),(2,256)}) on a CUDA machine, a small CPU one elsewhere.
  std::string device = "auto", spec, hc, json_path;
  std::vector<std::string> kinds = {"gatv2", "transformer"};
  int reps = 5;
  app.add_option("--device", device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--spec", spec, "graph generator spec");
  app.add_option("--hc", hc, "comma-separated HxC list, e.g. 4x64,8x128,2x256");
  app.add_option("--kinds", kinds, "gatv2, transformer or both (default)")
      ->delimiter(',')
      ->check(CLI::IsMember({"gatv2", "transformer"}));
  bool shared_kv = false;
  app.add_option("--reps", reps, "timed repetitions (median)");
  app.add_flag("--shared-kv", shared_kv,
               "Transformer only: one C-wide key row per source, also the value, for every head (kv_heads = 1, the "
               "folded TransformerConv); TESSERA_VARIANT_ATTENTION picks the forward variant");
  app.add_option("--json", json_path, "write results as JSON");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line per configuration, also into a file cut short by a time limit
  if (device == "auto") device = cuda_available() ? "cuda" : "cpu";
  if (spec.empty()) spec = device == "cuda" ? "rmat:scale=20,degree=16,seed=1" : "rmat:scale=14,degree=16,seed=1";
  if (hc.empty()) hc = device == "cuda" ? "4x64,8x128,2x256" : "4x32";
  if (shared_kv) kinds = {"transformer"};
  const Device dev = device == "cuda" ? Device{DeviceKind::cuda, 0} : Device{};
  TESSERA_CHECK(!dev.is_cuda() || cuda_available(), "attention_bench: no CUDA device");
  const auto g64 = gen::generate(spec);
  const auto g = convert_index<int32_t>(g64);
  const double copy_gbs = bench::copy_bandwidth_gbs(Exec{dev});
  std::printf("graph %s: %lld nodes, %lld edges; device %s", spec.c_str(), (long long)g.rows,
              (long long)g.nnz(), device_name(dev).c_str());
  if (copy_gbs > 0) std::printf("; copy bandwidth (read + write) %.0f GB/s, the shares' denominator", copy_gbs);
  std::printf("\n");
  json results = json::array();
  for (const auto& [H, C] : bench::parse_heads_channels(hc)) {
    for (const std::string& kind_name : kinds) {
      const AttentionKind kind = parse_attention_kind(kind_name);
      const Run r = bench_one(g, kind, H, C, dev, reps, shared_kv);
      const double fwd_gbs = r.fwd_floor_bytes / (r.fwd_ms * 1e6);
      const double share = bench::share_of_copy(fwd_gbs, copy_gbs);
      const double edge_gbs = r.fwd_edge_floor_bytes / (r.fwd_ms * 1e6);
      const double edge_share = bench::share_of_copy(edge_gbs, copy_gbs);
      std::printf("%-11s H=%-2lld C=%-4lld%s forward %9.3f ms (%7.1f GB/s over the rows-once floor, %.0f%% of copy bandwidth;"
                  " %7.1f GB/s over the per-edge floor, %.0f%%)  forward+backward %9.3f ms\n",
                  attention_kind_name(kind), (long long)H, (long long)C, shared_kv ? " shared kv" : "", r.fwd_ms, fwd_gbs,
                  100 * share, edge_gbs,
                  100 * edge_share, r.fwdbwd_ms);
      results.push_back({{"kind", attention_kind_name(kind)}, {"heads", H}, {"channels", C}, {"shared_kv", shared_kv},
                         {"forward_ms", r.fwd_ms},
                         {"forward_backward_ms", r.fwdbwd_ms}, {"forward_floor_bytes", r.fwd_floor_bytes},
                         {"backward_floor_bytes", r.bwd_floor_bytes}, {"forward_gbs", fwd_gbs},
                         {"forward_edge_floor_bytes", r.fwd_edge_floor_bytes}, {"forward_edge_floor_gbs", edge_gbs},
                         {"forward_share_of_copy_bandwidth_edge_floor", edge_share},
                         {"forward_share_of_copy_bandwidth", share}});
    }
  }
  if (!json_path.empty()) {
    std::string kind_list;  // the command as run, defaults filled in
    for (const auto& k : kinds) kind_list += (kind_list.empty() ? "" : ",") + k;
    json doc = {{"date", bench::now_utc()}, {"commit", bench::git_commit()}, {"device", device_name(dev)},
                {"graph", spec}, {"nodes", g.rows}, {"edges", g.nnz()}, {"copy_bandwidth_gbs", copy_gbs},
                {"command", std::string(argv[0]) + " --device " + device + " --spec " + spec + " --hc " + hc +
                                " --kinds " + kind_list + (shared_kv ? " --shared-kv" : "")},
                {"results", results}};
    if (!bench::write_json(json_path, doc)) return 1;
  }
  return 0;
}
