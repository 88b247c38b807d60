#pragma once
// The tuner: picks a variant for (device, op, dtypes, graph signature, width bucket). Order of
// choice: an explicit request (--variant / TESSERA_VARIANT_<FAMILY>), then a cached timing
// result, then the family's heuristic. Timing runs only when asked (tune = true, `tessera tune`)
// and stores the winner in a JSON cache file written atomically (temporary name + rename).
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/core/device.hpp"

namespace tessera::tune {

// Coarse graph signature: log2 buckets of nodes and edges and a skew class, so the cache entry
// carries over to graphs of the same kind and size.
struct GraphSignature {
  int log2_nodes = 0, log2_edges = 0, skew_class = 0;
  // The buckets of a graph of `nodes` and `edges` (ceil log2) with its skew class (-1: unknown).
  static GraphSignature of(int64_t nodes, int64_t edges, int skew_class);
  std::string str() const;
};

struct Key {
  std::string device, op, dtypes, graph;
  int64_t width_bucket = 0;       // next power of two of the feature width
  std::string str() const;
};

struct Choice {
  std::string variant;
  std::string source;             // "requested", "cache", "heuristic", "tuned"
  double ms = 0;                  // timing when source is "tuned"/"cache"
};

class Cache {
 public:
  // Path from TESSERA_TUNE_CACHE, else $XDG_CACHE_HOME/tessera/tune.json, else ~/.cache/...
  static Cache& global();
  explicit Cache(std::string path);
  bool lookup(const Key& k, Choice& out);
  void store(const Key& k, const Choice& c);  // persists immediately (atomic rename)
  void clear();
  const std::string& path() const { return path_; }
 private:
  void load_locked();
  void save_locked();
  std::string path_;
  bool loaded_ = false;
  std::map<std::string, Choice> entries_;
  std::mutex mu_;
};

// Times fn (median of `reps` after `warmup`), synchronizing exec's stream around it.
double time_ms(const Exec& exec, const std::function<void()>& fn, int warmup = 2, int reps = 5);

// Log of choices made in this process (the train summary prints it).
void record_choice(const std::string& family, const Key& k, const Choice& c);
std::vector<std::pair<std::string, Choice>> recorded_choices();

int64_t width_bucket(int64_t width);

}  // namespace tessera::tune
