// What bounds an fp32 SpMM's share of its IO floor on this GPU, graph by graph (#3's target: >= 60%
// of the floor at width 256, as the median over the benchmark's five graphs; gcn_bench.py measures
// the share). The floor counts the CSR, X read once and Y written once at the card's copy rate. Each
// graph's time is bounded below three ways:
//
// - The floor's own bytes, streamed. A kernel that moves exactly the floor's bytes in the friendliest
//   order (X copied to Y row for row with 16-byte accesses, the CSR's words read once; no gathers, no
//   dependent loads), timed as gcn_bench.py times the SpMM: 20 calls in a CUDA graph, each after an
//   L2 eviction (a read of four L2s, timed alone and subtracted), so every byte comes from device
//   memory. The best of four launch shapes. No SpMM moves fewer bytes or waits for fewer loads, so
//   none beats it; on a small graph it shows what the launch and the first reads cost on top of the
//   bytes, measured rather than modelled.
// - Launch and latency: an empty kernel's time inside a CUDA graph plus a chain of two dependent
//   reads from device memory (an entry's column, then its source row; SM cycles at the maximum
//   clock, so never longer than the truth). Reported for reference; the streamed floor includes it.
// - Gathers. A row-parallel (pull) SpMM reads the source row of every entry. A row reaches an SM
//   from the L2 unless that SM still holds it. The bound assumes one SM holds `--resident-kb` of
//   rows (default 256 KB, Hopper's whole L1 and shared memory) for a block of consecutive target
//   rows: its most used sources, each brought in once. Every other entry's row crosses from the L2.
//   It takes the best block size from 32 rows to the whole graph. At the L2's best read rate
//   (measured: an L2-resident buffer read by every SM) that traffic takes at least its bytes over
//   that rate: a cache that never misses on what it holds, and an L2 that never misses at all.
//
// The largest share each graph can reach is then floor / max(streamed floor, launch + latency,
// gathers). The target's median needs three graphs at 60%. Writes JSON (date, commit, device,
// command).
//
//   spmm_limits_bench --data-dir ../shared/data --json bench/results/spmm_limits.json
// Without a GPU it prints the graphs' side alone: floor bytes and the rows crossing from the L2.
#include <CLI/CLI.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "bench_common.hpp"
#include "tessera/core/cuda_check.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/tune/tuner.hpp"

using namespace tessera;
using json = nlohmann::json;

namespace {

// ---- the card's rates ---------------------------------------------------------------------------

__global__ void empty_kernel() {}

// Every thread reads float4s of buf, `passes` times over: with buf inside the L2, the L2's read rate;
// one pass over a buffer four times the L2 is the evictor (reads leave clean lines, so the next
// kernel pays no write-back, as bench_common.L2Evictor).
__global__ void l2_read_kernel(const float4* __restrict__ buf, int64_t n4, int passes, float* out) {
  float acc = 0.f;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += stride) {
      const float4 v = __ldcg(buf + i);  // L2, not L1: each pass must come from the L2 again
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 12345.f) out[0] = acc;  // keeps the loads; practically never true
}

// One thread, two dependent reads of a cold index array (an entry's column, then its row), in SM
// cycles.
__global__ void chain_kernel(const int64_t* __restrict__ next, long long* cycles, int64_t* out) {
  const long long t0 = clock64();
  const int64_t a = next[0];
  const int64_t b = next[a];
  const long long t1 = clock64();
  cycles[0] = t1 - t0;
  out[0] = b;
}

// Moves the floor's bytes and nothing else: items [0, n4) copy X's float4 k to Y (coalesced, 16
// bytes each way), items [n4, n4 + csr4) read the CSR's words once. Kept loads: their xor goes to
// sink only in the practically impossible case that it equals a constant.
__global__ void floor_stream_kernel(const float4* __restrict__ X, float4* __restrict__ Y, int64_t n4,
                                    const int4* __restrict__ csr, int64_t csr4, unsigned* sink) {
  constexpr int kUnroll = 4;  // loads in flight per thread before the first store
  const int64_t stride = int64_t(gridDim.x) * blockDim.x, total = n4 + csr4;
  unsigned acc = 0;
  for (int64_t k0 = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k0 < total; k0 += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t k = k0 + u * stride;
      if (k < n4) {
        v[u] = X[k];
      } else if (k < total) {
        const int4 w = csr[k - n4];
        acc ^= unsigned(w.x ^ w.y ^ w.z ^ w.w);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (k0 + u * stride < n4) Y[k0 + u * stride] = v[u];
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// Microseconds per call of `body` (kernel launches on the stream it is given) with no host in the
// way: `calls` calls captured into one CUDA graph, replayed 10 times, median (as bench_common.py's
// graph_us_cuda).
double graph_us(const Exec& exec, int calls, const std::function<void(cudaStream_t)>& body) {
  cudaStream_t cs;
  TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t inst;
  TESSERA_CUDA_CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) body(cs);
  TESSERA_CUDA_CHECK(cudaStreamEndCapture(cs, &graph));
  TESSERA_CUDA_CHECK(cudaGraphInstantiate(&inst, graph, 0));
  Exec on_cs = exec;
  on_cs.stream = cs;
  const double ms = tune::time_ms(on_cs, [&] { TESSERA_CUDA_CHECK(cudaGraphLaunch(inst, cs)); }, 2, 10);
  TESSERA_CUDA_CHECK(cudaGraphExecDestroy(inst));
  TESSERA_CUDA_CHECK(cudaGraphDestroy(graph));
  TESSERA_CUDA_CHECK(cudaStreamDestroy(cs));
  return ms * 1e3 / calls;
}

// Empties the L2 between timed calls: one read of max(4 L2, 256 MiB); us is its own time per call in a
// CUDA graph, subtracted from what it precedes.
struct Evictor {
  Scratch buf;
  int sms;
  double us = 0;
  Evictor(const Exec& exec, int64_t l2_bytes, int sms_)
      : buf(exec, size_t(std::max<int64_t>(4 * l2_bytes, int64_t(256) << 20))), sms(sms_) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, buf.bytes(), cuda_stream(exec.stream)));
    us = graph_us(exec, 20, [&](cudaStream_t cs) { (*this)(cs); });
  }
  void operator()(cudaStream_t cs) const {
    l2_read_kernel<<<unsigned(4 * sms), 512, 0, cs>>>(buf.as<const float4>(), int64_t(buf.bytes() / 16), 1,
                                                     buf.as<float>());
    TESSERA_CUDA_LAUNCH_CHECK();
  }
};

struct Rates {
  double copy_gbs = 0, l2_read_gbs = 0, empty_kernel_us = 0, chain_us = 0;
};

Rates measure_rates(const Exec& exec, int device) {
  Rates r;
  r.copy_gbs = bench::copy_bandwidth_gbs(exec);
  cudaStream_t s = cuda_stream(exec.stream);
  int sms = 0, clock_khz = 0;
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  // The L2's read rate: a 16 MiB buffer (a third of the H100's and H200's 50 MB L2), 20 passes.
  {
    constexpr int64_t kBytes = int64_t(16) << 20;
    constexpr int kPasses = 20;
    Scratch buf(exec, kBytes), out(exec, 64);
    TESSERA_CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, kBytes, s));
    const double ms = tune::time_ms(exec, [&] {
      l2_read_kernel<<<4 * sms, 512, 0, s>>>(static_cast<const float4*>(buf.get()), kBytes / 16, kPasses,
                                            static_cast<float*>(out.get()));
      TESSERA_CUDA_LAUNCH_CHECK();
    }, 2, 10);
    r.l2_read_gbs = double(kBytes) * kPasses / (ms * 1e6);
  }
  // An empty kernel's time inside a CUDA graph of 200 launches back to back.
  r.empty_kernel_us = graph_us(exec, 200, [&](cudaStream_t cs) {
    empty_kernel<<<sms, 128, 0, cs>>>();
    TESSERA_CUDA_LAUNCH_CHECK();
  });
  // Two dependent reads with a cold L2: a 256 MiB memset between the runs evicts it.
  {
    constexpr int64_t kWords = int64_t(64) << 20;  // 512 MiB of int64: the two reads 256 MiB apart
    Scratch next(exec, kWords * 8), evict(exec, int64_t(256) << 20), cyc(exec, 8), out(exec, 8);
    std::vector<int64_t> host(2, 0);
    host[0] = kWords / 2;
    TESSERA_CUDA_CHECK(cudaMemsetAsync(next.get(), 0, kWords * 8, s));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(next.get(), host.data(), 8, cudaMemcpyHostToDevice, s));
    std::vector<double> us;
    for (int rep = 0; rep < 9; ++rep) {
      TESSERA_CUDA_CHECK(cudaMemsetAsync(evict.get(), rep, int64_t(256) << 20, s));
      chain_kernel<<<1, 1, 0, s>>>(static_cast<const int64_t*>(next.get()), static_cast<long long*>(cyc.get()),
                                   static_cast<int64_t*>(out.get()));
      TESSERA_CUDA_LAUNCH_CHECK();
      long long c = 0;
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(&c, cyc.get(), 8, cudaMemcpyDeviceToHost, s));
      TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
      us.push_back(double(c) / clock_khz * 1e3);  // at the maximum clock: never longer than the truth
    }
    std::sort(us.begin(), us.end());
    r.chain_us = us[us.size() / 2];
  }
  return r;
}

// The floor's bytes streamed (floor_stream_kernel) for n rows of row_bytes and the CSR's csr_bytes:
// microseconds per call warm (a small graph's X, Y and CSR still in the L2 from the call before) and
// cold (each call after `evict`, whose own time is subtracted), each the best of four launch
// shapes: one thread per four items, and 4, 8 or 16 blocks of 256 threads per SM striding over them.
struct Streamed {
  double warm_us = 0, cold_us = 0;
  int64_t cold_blocks = 0;
};

Streamed stream_floor(const Exec& exec, int sms, int64_t n, int64_t row_bytes, int64_t csr_bytes,
                      const Evictor& evict) {
  const int64_t n4 = n * row_bytes / 16, csr4 = (csr_bytes + 15) / 16, total = n4 + csr4;
  Scratch x(exec, size_t(n4) * 16), y(exec, size_t(n4) * 16), csr(exec, size_t(csr4) * 16), sink(exec, 64);
  cudaStream_t s = cuda_stream(exec.stream);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(x.get(), 0, size_t(n4) * 16, s));
  TESSERA_CUDA_CHECK(cudaMemsetAsync(csr.get(), 0, size_t(csr4) * 16, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  Streamed best{1e30, 1e30, 0};
  for (int64_t blocks : {(total + 1023) / 1024, int64_t(4) * sms, int64_t(8) * sms, int64_t(16) * sms}) {
    blocks = std::clamp<int64_t>(blocks, 1, INT32_MAX);
    const auto stream = [&](cudaStream_t cs) {
      floor_stream_kernel<<<unsigned(blocks), 256, 0, cs>>>(x.as<const float4>(), y.as<float4>(), n4,
                                                             csr.as<const int4>(), csr4, sink.as<unsigned>());
      TESSERA_CUDA_LAUNCH_CHECK();
    };
    const double warm = graph_us(exec, 20, stream);
    const double cold = graph_us(exec, 20, [&](cudaStream_t cs) {
      evict(cs);
      stream(cs);
    }) - evict.us;
    best.warm_us = std::min(best.warm_us, warm);
    if (cold < best.cold_us) best.cold_us = cold, best.cold_blocks = blocks;
  }
  return best;
}

// ---- the graphs ---------------------------------------------------------------------------------

struct Graph {
  std::string name, spec;
  Csr<int64_t> g;
};

// The graph `name` as the GCN layer multiplies by it: one self loop per node (PyG's
// add_remaining_self_loops, on graphs whose parallel edges are merged). Rows 0 when a data set is
// not under data_dir.
Graph load(const std::string& name, const std::string& data_dir) {
  BuildOptions loops;
  loops.self_loops = SelfLoops::add;
  if (const std::string spec = bench::generated_graph_spec(name); !spec.empty())
    return {name, spec, gen::generate(spec, loops)};
  const std::string dir = data_dir + "/" + name;
  if (!std::filesystem::is_directory(dir)) return {name, dir, Csr<int64_t>{}};
  return {name, dir, build_csr(to_coo(io::read_planetoid(dir).graph.view()), loops)};
}

// Source rows that must reach the SMs from the L2 when each block of `block` consecutive targets
// keeps its `resident` most used sources on chip: a kept row once, every other entry's row each time.
int64_t crossing_entries(const Csr<int64_t>& g, int64_t block, int64_t resident) {
  const int64_t n = g.rows, blocks = (n + block - 1) / block;
  int64_t crossing = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : crossing)
  for (int64_t b = 0; b < blocks; ++b) {
    std::vector<int64_t> src(g.col.begin() + g.rowptr[size_t(b * block)],
                             g.col.begin() + g.rowptr[size_t(std::min(n, (b + 1) * block))]);
    std::sort(src.begin(), src.end());
    std::vector<int64_t> uses;
    for (size_t k = 0; k < src.size();) {
      size_t e = k;
      while (e < src.size() && src[e] == src[k]) ++e;
      uses.push_back(int64_t(e - k));
      k = e;
    }
    const size_t keep = std::min(uses.size(), size_t(resident));
    std::partial_sort(uses.begin(), uses.begin() + keep, uses.end(), std::greater<>());
    int64_t held = 0;
    for (size_t k = 0; k < keep; ++k) held += uses[k] - 1;  // its first use brings it in
    crossing += int64_t(src.size()) - held;
  }
  return crossing;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spmm_limits_bench: lower bounds on an fp32 SpMM's time against its IO floor"};
  const char* shared = std::getenv("TESSERA_SHARED_DATA");  // as bench_common.py
  std::vector<std::string> graphs{"rmat", "grid", "clustered", "cora", "pubmed"};
  std::string json_path;
  std::string data_dir = shared ? shared : std::string(TESSERA_SOURCE_DIR) + "/../shared/data";
  int64_t width = 256, resident_kb = 256;
  app.add_option("--graphs", graphs, "comma-separated: rmat, grid, clustered, cora, pubmed")->delimiter(',');
  app.add_option("--data-dir", data_dir,
                 "where cora/ and pubmed/ are (Planetoid; default $TESSERA_SHARED_DATA or ../shared/data)");
  app.add_option("--width", width, "feature width F (fp32)")->check(CLI::PositiveNumber);
  app.add_option("--resident-kb", resident_kb, "on-chip bytes one SM holds rows in (KB)")->check(CLI::PositiveNumber);
  app.add_option("--json", json_path, "write the record here");
  CLI11_PARSE(app, argc, argv);
  // Without a GPU: the graphs' side alone (floor bytes, rows crossing from the L2), no times.
  const bool gpu = cuda_available();
  try {
    cudaDeviceProp prop{};
    Rates r;
    Exec exec;
    std::unique_ptr<Evictor> evict;
    if (gpu) {
      int device = 0;
      TESSERA_CUDA_CHECK(cudaGetDevice(&device));
      TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
      exec.device = Device{DeviceKind::cuda, device};
      r = measure_rates(exec, device);
      evict = std::make_unique<Evictor>(exec, prop.l2CacheSize, prop.multiProcessorCount);
      std::printf("%s: copy %.0f GB/s (read + write), L2 read %.0f GB/s, empty kernel in a graph %.2f us, "
                  "two dependent cold reads %.2f us\n",
                  prop.name, r.copy_gbs, r.l2_read_gbs, r.empty_kernel_us, r.chain_us);
    } else {
      std::printf("no CUDA device: the graphs' floors and the rows crossing from the L2 only (times need a GPU)\n");
    }
    const int64_t row_bytes = width * 4, resident = std::max<int64_t>(1, resident_kb * 1024 / row_bytes);
    json rows_json = json::array();
    std::vector<double> best_shares;
    for (const std::string& name : graphs) {
      const Graph gr = load(name, data_dir);
      if (gr.g.rows == 0) {
        std::printf("%-10s skipped: no data set at %s\n", name.c_str(), gr.spec.c_str());
        continue;
      }
      const int64_t n = gr.g.rows, nnz = gr.g.nnz();
      // gcn_bench.py's floor: rowptr + col (int32) + values + X read once + Y written once.
      const double floor_bytes = double(n + 1) * 4 + double(nnz) * 8 + 2.0 * double(n) * double(row_bytes);
      int64_t crossing = nnz, best_block = n;
      for (int64_t block : {int64_t(32), int64_t(256), int64_t(2048), int64_t(16384), n}) {
        const int64_t c = crossing_entries(gr.g, std::min(block, n), resident);
        if (c < crossing) crossing = c, best_block = std::min(block, n);
      }
      if (!gpu) {
        std::printf("%-10s %8lld rows %9lld entries | floor %9.1f MB | rows crossing from L2 %9lld (block %lld): "
                    "%9.1f MB\n", name.c_str(), (long long)n, (long long)nnz, floor_bytes / 1e6, (long long)crossing,
                    (long long)best_block, double(crossing) * double(row_bytes) / 1e6);
        continue;
      }
      const double floor_us = floor_bytes / (r.copy_gbs * 1e3);
      const double gather_us = double(crossing) * double(row_bytes) / (r.l2_read_gbs * 1e3);
      const double latency_us = r.empty_kernel_us + r.chain_us;
      const Streamed st = stream_floor(exec, prop.multiProcessorCount, n, row_bytes, (n + 1) * 4 + nnz * 8, *evict);
      const double bound_us = std::max({floor_us, st.cold_us, latency_us, gather_us});
      const double best_share = floor_us / bound_us;
      best_shares.push_back(best_share);
      std::printf("%-10s %8lld rows %9lld entries | floor %8.1f us (60%%: kernel <= %8.1f us) | floor streamed, "
                  "cold L2 %8.1f us (%3.0f%%), warm %8.1f us | launch+latency >= %5.2f us | rows crossing from L2 "
                  "%9lld (block %lld) >= %8.1f us | best share <= %3.0f%%\n",
                  name.c_str(), (long long)n, (long long)nnz, floor_us, floor_us / 0.6, st.cold_us,
                  100 * floor_us / st.cold_us, st.warm_us, latency_us, (long long)crossing, (long long)best_block,
                  gather_us, 100 * best_share);
      rows_json.push_back({{"graph", name}, {"spec", gr.spec}, {"rows", n}, {"entries", nnz},
                           {"floor_bytes", floor_bytes}, {"floor_us", floor_us},
                           {"floor_streamed_cold_us", st.cold_us}, {"floor_streamed_cold_blocks", st.cold_blocks},
                           {"floor_streamed_warm_us", st.warm_us}, {"latency_bound_us", latency_us},
                           {"crossing_entries", crossing}, {"crossing_block_rows", best_block},
                           {"gather_bound_us", gather_us}, {"best_share_of_floor", best_share}});
    }
    if (!gpu) return 0;
    std::sort(best_shares.begin(), best_shares.end());
    const size_t m = best_shares.size();
    const double median_bound =
        m == 0 ? 0.0 : m % 2 ? best_shares[m / 2] : 0.5 * (best_shares[m / 2 - 1] + best_shares[m / 2]);
    std::printf("median of the best shares: %.0f%% (target 60%%)\n", 100 * median_bound);
    if (!json_path.empty()) {
      json doc = {{"benchmark", "spmm_limits"}, {"date", bench::now_utc()}, {"commit", bench::git_commit()},
                  {"device", prop.name}, {"command", bench::command_line(argc, argv)},
                  {"width", width}, {"resident_kb", resident_kb},
                  {"rates", {{"copy_GBps", r.copy_gbs}, {"l2_read_GBps", r.l2_read_gbs},
                             {"empty_kernel_us", r.empty_kernel_us}, {"two_dependent_cold_reads_us", r.chain_us},
                             {"evictor_us", evict->us}}},
                  {"graphs", rows_json}, {"median_best_share", median_bound}};
      if (!bench::write_json(json_path, doc)) return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmm_limits_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
