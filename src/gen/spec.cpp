// Generator specs: "name" or "name:key=value,key=value". Every key has a default, unknown names,
// unknown keys and malformed values raise tessera::Error naming them.
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"

namespace tessera::gen {
namespace {

struct KeyDef {
  std::string name, def, help;
};
struct GenDef {
  std::string name, help;
  std::vector<KeyDef> keys;
};

const std::vector<GenDef>& generators() {
  static const std::vector<GenDef> defs = {
      {"er", "Erdos-Renyi G(n,m), undirected", {{"nodes", "10000", ""}, {"degree", "10", "average degree"}, {"seed", "1", ""}}},
      {"ba", "Barabasi-Albert preferential attachment, undirected", {{"nodes", "10000", ""}, {"m", "4", "edges per new node"}, {"seed", "1", ""}}},
      {"rmat", "R-MAT power law (Graph500 a=.57 b=.19 c=.19), directed",
       {{"scale", "16", "2^scale nodes"}, {"degree", "16", "edges per node"}, {"seed", "1", ""}, {"a", "0.57", ""},
        {"b", "0.19", ""}, {"c", "0.19", ""}, {"noise", "0", "per-level jitter"}, {"scramble", "0", "relabel nodes (0/1)"}}},
      {"ws", "Newman-Watts-Strogatz small world, undirected",
       {{"nodes", "10000", ""}, {"k", "10", "lattice neighbours (even)"}, {"p", "0.1", "shortcut probability"}, {"seed", "1", ""}}},
      {"grid", "2-D 4-neighbour lattice (road-like), undirected", {{"rows", "100", ""}, {"cols", "100", ""}}},
      {"clustered", "communities of contiguous ids, undirected",
       {{"nodes", "10000", ""}, {"clusters", "10", ""}, {"degree", "10", ""}, {"p_in", "0.9", "share of edges inside"}, {"seed", "1", ""}}},
      {"sbm", "planted-partition node classification task (the default data set)",
       {{"nodes", "2000", ""}, {"classes", "5", ""}, {"degree", "10", ""}, {"p_in", "0.8", "share of edges inside the class"},
        {"features", "64", ""}, {"signal", "1", "class-mean separation / noise"}, {"train", "0.1", "share"},
        {"val", "0.2", "share"}, {"seed", "1", ""}}},
  };
  return defs;
}

const GenDef* find_generator(const std::string& name) {
  for (const auto& g : generators())
    if (g.name == name) return &g;
  return nullptr;
}

std::string known_names() {
  std::string s;
  for (const auto& g : generators()) s += (s.empty() ? "" : ", ") + g.name;
  return s;
}

// A parsed spec: values by key, defaults filled in.
class Spec {
 public:
  explicit Spec(const std::string& text) : text_(text) {
    const auto colon = text.find(':');
    name_ = text.substr(0, colon);
    def_ = find_generator(name_);
    TESSERA_CHECK(def_, "unknown generator '", name_, "' in spec '", text, "' (known: ", known_names(), ")");
    for (const auto& k : def_->keys) values_[k.name] = k.def;
    if (colon == std::string::npos) return;
    std::set<std::string> seen;
    std::stringstream items(text.substr(colon + 1));
    std::string item;
    while (std::getline(items, item, ',')) {
      const auto eq = item.find('=');
      TESSERA_CHECK(eq != std::string::npos && eq > 0, "spec '", text, "': expected key=value, got '", item, "'");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      TESSERA_CHECK(values_.count(key), "spec '", text, "': unknown key '", key, "' for ", name_, " (keys: ", keys(), ")");
      TESSERA_CHECK(seen.insert(key).second, "spec '", text, "': key '", key, "' given twice");
      TESSERA_CHECK(!value.empty(), "spec '", text, "': empty value for '", key, "'");
      values_[key] = value;
    }
  }
  const std::string& name() const { return name_; }

  double real(const std::string& key) const {
    const std::string& v = values_.at(key);
    double x = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    TESSERA_CHECK(r.ec == std::errc() && r.ptr == v.data() + v.size() && std::isfinite(x), "spec '", text_,
                  "': bad value '", v, "' for '", key, "' (expected a number)");
    return x;
  }
  // Integers accept "1000000" and exact forms like "1e6".
  int64_t integer(const std::string& key, int64_t lo, int64_t hi) const {
    const std::string& v = values_.at(key);
    int64_t x = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) {
      const double d = real(key);
      TESSERA_CHECK(d == std::floor(d) && std::abs(d) < 9.2e18, "spec '", text_, "': bad value '", v, "' for '",
                    key, "' (expected an integer)");
      x = int64_t(d);
    }
    TESSERA_CHECK(x >= lo && x <= hi, "spec '", text_, "': value ", x, " for '", key, "' out of range [", lo, ", ",
                  hi, "]");
    return x;
  }
  bool flag(const std::string& key) const { return integer(key, 0, 1) != 0; }
  uint64_t seed() const { return uint64_t(integer("seed", 0, std::numeric_limits<int64_t>::max())); }

 private:
  std::string keys() const {
    std::string s;
    for (const auto& k : def_->keys) s += (s.empty() ? "" : ", ") + k.name;
    return s;
  }
  std::string text_, name_;
  const GenDef* def_ = nullptr;
  std::map<std::string, std::string> values_;
};

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

SbmOptions sbm_options(const Spec& s) {
  SbmOptions o;
  o.nodes = s.integer("nodes", 1, kMaxInt);
  o.classes = int(s.integer("classes", 1, kMaxInt32));
  o.avg_degree = s.real("degree");
  o.p_in_share = s.real("p_in");
  o.features = int(s.integer("features", 1, kMaxInt32));
  o.feature_signal = s.real("signal");
  o.train = s.real("train");
  o.val = s.real("val");
  o.seed = s.seed();
  return o;
}

Coo<int64_t> edges_of(const Spec& s) {
  const std::string& n = s.name();
  if (n == "er") return erdos_renyi(s.integer("nodes", 1, kMaxInt), s.real("degree"), s.seed());
  if (n == "ba") return barabasi_albert(s.integer("nodes", 1, kMaxInt), int(s.integer("m", 1, kMaxInt32)), s.seed());
  if (n == "rmat") {
    RmatOptions o;
    o.scale = int(s.integer("scale", 1, 40));
    o.avg_degree = s.real("degree");
    o.seed = s.seed();
    o.a = s.real("a");
    o.b = s.real("b");
    o.c = s.real("c");
    o.noise = s.real("noise");
    o.scramble = s.flag("scramble");
    return rmat(o);
  }
  if (n == "ws")
    return watts_strogatz(s.integer("nodes", 1, kMaxInt), int(s.integer("k", 1, kMaxInt32)), s.real("p"), s.seed());
  if (n == "grid") return grid2d(s.integer("rows", 1, kMaxInt), s.integer("cols", 1, kMaxInt));
  if (n == "clustered")
    return clustered(s.integer("nodes", 1, kMaxInt), s.integer("clusters", 1, kMaxInt), s.real("degree"),
                     s.real("p_in"), s.seed());
  fail("generator '", n, "' has no edge list");  // unreachable: names are checked by Spec
}

}  // namespace

bool is_generator_spec(const std::string& spec) {
  return find_generator(spec.substr(0, spec.find(':'))) != nullptr;
}

std::string generator_help() {
  std::ostringstream os;
  for (const auto& g : generators()) {
    os << "  " << g.name << ": " << g.help << "\n    keys:";
    for (const auto& k : g.keys) os << " " << k.name << "=" << k.def;
    os << "\n";
  }
  return os.str();
}

Csr<int64_t> generate(const std::string& spec, const BuildOptions& build) {
  const Spec s(spec);
  if (s.name() == "sbm") {
    NodeDataset ds = sbm_task(sbm_options(s));
    if (!build.symmetrize && build.deduplicate && build.self_loops == SelfLoops::keep) return std::move(ds.graph);
    return build_csr(to_coo(ds.graph.view()), build);
  }
  return build_csr(edges_of(s), build);
}

NodeDataset generate_task(const std::string& spec) {
  const Spec s(spec);
  TESSERA_CHECK(s.name() == "sbm", "spec '", spec, "' is a graph, not a node-classification task (only sbm is)");
  return sbm_task(sbm_options(s));
}

}  // namespace tessera::gen
