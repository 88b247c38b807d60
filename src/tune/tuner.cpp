// The tuner cache: a JSON file mapping Key::str() to the winning variant.
//
// File format: {"version": 1, "entries": {"<key>": {"variant": "...", "source": "tuned", "ms": 1.2}}}
// Writes go to "<path>.tmp.<pid>" and are renamed over the file, so readers never see half a file;
// before writing, the current file is re-read and merged so concurrent processes lose nothing but
// a race on the same key.
//
// A corrupted or unreadable cache file is IGNORED WITH A WARNING on stderr (never an error): the
// cache is an optimization, and a bad file must not stop training. The bad file is kept next to
// the cache as "<path>.corrupt" for inspection, and the next store() writes a fresh, valid file.
#include "tessera/tune/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/tune/choose.hpp"

#ifdef TESSERA_WITH_CUDA
#include "tessera/core/cuda_check.hpp"
#endif

namespace tessera::tune {

namespace fs = std::filesystem;
using json = nlohmann::json;

GraphSignature GraphSignature::of(int64_t nodes, int64_t edges, int skew_class) {
  auto log2_ceil = [](int64_t v) {
    int l = 0;
    while ((int64_t(1) << l) < v) ++l;
    return l;
  };
  return {log2_ceil(nodes), log2_ceil(edges), skew_class};
}

std::string GraphSignature::str() const {
  return "n2^" + std::to_string(log2_nodes) + ".e2^" + std::to_string(log2_edges) + ".skew" +
         (skew_class < 0 ? std::string("?") : std::to_string(skew_class));
}

std::string Key::str() const {
  return device + "|" + op + "|" + dtypes + "|" + graph + "|w" + std::to_string(width_bucket);
}

int64_t width_bucket(int64_t width) {
  int64_t b = 1;
  while (b < width) b <<= 1;
  return width <= 0 ? 0 : b;
}

namespace {
std::string default_cache_path() {
  if (const char* p = std::getenv("TESSERA_TUNE_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tessera/tune.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessera/tune.json";
  return "tessera_tune.json";
}

// Parses a cache file into `out`; returns false (and says why in `why`) for malformed content.
bool parse_cache(const std::string& text, std::map<std::string, Choice>& out, std::string& why) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return why = "not valid JSON", false;
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_object())
    return why = "no \"entries\" object", false;
  if (j.value("version", 0) != 1) return why = "unknown version", false;
  for (auto it = j["entries"].begin(); it != j["entries"].end(); ++it) {
    const json& e = it.value();
    if (!e.is_object() || !e.contains("variant") || !e["variant"].is_string() ||
        (e.contains("ms") && !e["ms"].is_number()))
      return why = "malformed entry '" + it.key() + "'", false;
    out[it.key()] = Choice{e["variant"].get<std::string>(), e.value("source", std::string("tuned")),
                           e.value("ms", 0.0)};
  }
  return true;
}
}  // namespace

Cache& Cache::global() {
  static Cache cache(default_cache_path());
  return cache;
}

Cache::Cache(std::string path) : path_(std::move(path)) {}

void Cache::load_locked() {
  loaded_ = true;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;  // no cache yet
  std::stringstream ss;
  ss << in.rdbuf();
  std::map<std::string, Choice> parsed;
  std::string why;
  if (!parse_cache(ss.str(), parsed, why)) {
    std::fprintf(stderr, "tessera: warning: ignoring corrupted tuner cache %s (%s); kept as %s.corrupt\n",
                 path_.c_str(), why.c_str(), path_.c_str());
    std::error_code ec;
    fs::copy_file(path_, path_ + ".corrupt", fs::copy_options::overwrite_existing, ec);
    return;
  }
  for (auto& [k, v] : parsed) entries_.emplace(k, v);  // in-memory entries win
}

void Cache::save_locked() {
  // Merge with what other processes wrote since we loaded.
  {
    std::ifstream in(path_, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      std::map<std::string, Choice> disk;
      std::string why;
      if (parse_cache(ss.str(), disk, why))
        for (auto& [k, v] : disk) entries_.emplace(k, v);
    }
  }
  json j;
  j["version"] = 1;
  j["entries"] = json::object();
  for (const auto& [k, c] : entries_)
    j["entries"][k] = {{"variant", c.variant}, {"source", c.source}, {"ms", c.ms}};
  const fs::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  io::write_file(path_, j.dump(1) + "\n");  // a temporary file renamed onto the cache: never half written
}

bool Cache::lookup(const Key& k, Choice& out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!loaded_) load_locked();
  auto it = entries_.find(k.str());
  if (it == entries_.end()) return false;
  out = it->second;
  return true;
}

void Cache::store(const Key& k, const Choice& c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!loaded_) load_locked();
  entries_[k.str()] = c;
  save_locked();
  entries_[k.str()] = c;  // the merge must not resurrect an older value for our key
}

void Cache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  loaded_ = true;
  std::error_code ec;
  fs::remove(path_, ec);
}

double time_ms(const Exec& exec, const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  ms.reserve(size_t(std::max(reps, 1)));
#ifdef TESSERA_WITH_CUDA
  if (exec.device.is_cuda()) {
    cudaStream_t s = cuda_stream(exec.stream);
    CudaEventPair ev;
    for (int i = 0; i < std::max(reps, 1); ++i) {
      ev.start(s);
      fn();
      ev.stop(s);
      ms.push_back(ev.elapsed_ms());
    }
  }
#endif
  if (ms.empty()) {
    for (int i = 0; i < std::max(reps, 1); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      fn();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

namespace {
std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::pair<std::string, Choice>>& log_entries() {
  static std::vector<std::pair<std::string, Choice>> v;
  return v;
}
std::atomic<int>& tuning_flag() {  // -1: not set yet (read the environment)
  static std::atomic<int> f{-1};
  return f;
}
}  // namespace

void record_choice(const std::string& family, const Key& k, const Choice& c) {
  const std::string name = family + " " + k.str();
  std::lock_guard<std::mutex> lock(log_mutex());
  for (auto& [n, old] : log_entries())
    if (n == name) {
      old = c;
      return;
    }
  log_entries().emplace_back(name, c);
}

std::vector<std::pair<std::string, Choice>> recorded_choices() {
  std::lock_guard<std::mutex> lock(log_mutex());
  return log_entries();
}

bool tuning_enabled() {
  int f = tuning_flag().load();
  if (f < 0) {
    const char* e = std::getenv("TESSERA_TUNE");
    f = (e && std::string(e) != "0" && *e) ? 1 : 0;
    tuning_flag().store(f);
  }
  return f == 1;
}
void set_tuning(bool on) { tuning_flag().store(on ? 1 : 0); }

bool first_tuning_of(const std::string& family, const Key& key) {
  static std::mutex m;
  static std::set<std::string> done;
  std::lock_guard<std::mutex> lock(m);
  return done.insert(family + " " + key.str()).second;
}

const std::string& device_key(const Device& d) {
  static std::mutex m;
  static std::map<std::pair<int, int>, std::string> names;
  std::lock_guard<std::mutex> lock(m);
  auto key = std::make_pair(int(d.kind), d.index);
  auto it = names.find(key);
  if (it == names.end()) it = names.emplace(key, device_name(d)).first;
  return it->second;
}

}  // namespace tessera::tune
