#pragma once
// Provenance shared by the C++ benchmark drivers (bench_common.py is the Python twin): every JSON
// record carries the UTC date and the commit it measured.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/device.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/tune/tuner.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>

#include "tessera/core/cuda_check.hpp"
#endif

namespace tessera::bench {

inline std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// TESSERA_COMMIT when set (scripts/gpu_session.sh exports it: on the GPU machine the tree is a
// copy inside a stale git checkout, whose HEAD would be wrong), else the source tree's git HEAD,
// else "unknown".
inline std::string git_commit() {
  if (const char* c = std::getenv("TESSERA_COMMIT"); c && *c) return c;
  const std::string cmd = std::string("git -C ") + TESSERA_SOURCE_DIR + " rev-parse HEAD 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "unknown";
  char buf[64] = {0};
  const bool ok = std::fgets(buf, sizeof buf, p) != nullptr;
  pclose(p);
  std::string s = ok ? buf : "unknown";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "unknown" : s;
}

// The command that ran, for the JSON record: argv joined by spaces.
inline std::string command_line(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  return command;
}

// The generator spec of a generated benchmark graph of the issues (rmat, grid, clustered), "" for
// any other name. bench_common.py's GENERATED_GRAPHS is the Python twin.
inline std::string generated_graph_spec(const std::string& name) {
  if (name == "rmat") return "rmat:scale=20,degree=16,seed=1";
  if (name == "grid") return "grid:rows=1024,cols=1024";
  if (name == "clustered") return "clustered:nodes=65536,clusters=256,degree=200,seed=1";
  return "";
}

// Writes doc (a JSON value) to path through a temporary name and a rename, so an interrupted run
// never leaves a half-written result; creates the parent directory. Says on stdout what it wrote,
// on stderr why it could not (then false: the driver exits non-zero).
template <class Json>
[[nodiscard]] bool write_json(const std::string& path, const Json& doc) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  try {
    tessera::io::write_file(path, doc.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return false;
  }
  std::printf("wrote %s\n", path.c_str());
  return true;
}

// Median wall time in ms of reps calls of fn, each followed by sync() (the device's synchronize),
// after one untimed call (warm-up: allocations, memoized graph forms, tuner choices).
template <class Fn, class Sync>
double median_ms(int reps, Fn&& fn, Sync&& sync) {
  fn();
  sync();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    sync();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Device-to-device copy bandwidth of exec's GPU in GB/s (bytes read + bytes written; median of 10
// copies of 1 GiB), measured now: the IO floors' denominator, so a share of copy bandwidth means the
// same on an H100 (about 3 TB/s) as on an H200 (about 4.2 TB/s) instead of assuming the H200's
// figure (bench_common.copy_bandwidth_cuda is the Python twin). 0 on the CPU.
inline double copy_bandwidth_gbs(const Exec& exec) {
#ifdef TESSERA_WITH_CUDA
  if (!exec.device.is_cuda()) return 0.0;
  constexpr size_t kBytes = size_t(1) << 30;
  Scratch src(exec, kBytes), dst(exec, kBytes);
  cudaStream_t s = cuda_stream(exec.stream);
  const double ms = tune::time_ms(exec, [&] {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kBytes, cudaMemcpyDeviceToDevice, s));
  }, 2, 10);
  return 2.0 * double(kBytes) / (ms * 1e6);
#else
  (void)exec;
  return 0.0;
#endif
}

// A rate's share of the copy bandwidth copy_bandwidth_gbs measured (0 without one: the CPU).
inline double share_of_copy(double gbs, double copy_gbs) { return copy_gbs > 0 ? gbs / copy_gbs : 0.0; }

// "4x64,8x128" -> {(4, 64), (8, 128)}: the (heads, channels per head) lists of the attention benchmarks.
inline std::vector<std::pair<int64_t, int64_t>> parse_heads_channels(const std::string& list) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t pos = 0; pos < list.size();) {
    const size_t next = list.find(',', pos);
    const std::string item = list.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    pos = next == std::string::npos ? list.size() : next + 1;
    out.emplace_back(std::stoll(item.substr(0, item.find('x'))), std::stoll(item.substr(item.find('x') + 1)));
  }
  return out;
}

}  // namespace tessera::bench
