#pragma once
// Variants registered as data. Each operator family keeps one Registry<Args>: a table of named
// variants, each with the backend it runs on, an eligibility predicate and a run function, plus
// one default heuristic for the family. The dispatcher, the tuner, the CLI's --variant flag and
// the conformance tests all read the same table, so a new variant is one entry, and is tested.
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"

namespace tessera::tune {

enum class Backend : uint8_t { reference, cpu, cuda };
inline const char* backend_name(Backend b) {
  return b == Backend::reference ? "reference" : b == Backend::cpu ? "cpu" : "cuda";
}
inline bool runs_on(Backend b, const Device& d) {
  return d.is_cuda() ? b == Backend::cuda : b != Backend::cuda;
}

template <class Args>
struct Variant {
  std::string name;                                     // e.g. "cuda.csr.warp_row"
  Backend backend = Backend::cpu;
  std::function<bool(const Args&)> eligible;            // shape/dtype/graph conditions
  std::function<void(const Args&, const Exec&)> run;
  std::string note;                                     // one line for --list-variants
};

template <class Args>
class Registry {
 public:
  explicit Registry(std::string family) : family_(std::move(family)) {}
  const std::string& family() const { return family_; }

  void add(Variant<Args> v) {
    for (const auto& o : variants_)
      TESSERA_CHECK(o.name != v.name, family_, ": variant '", v.name, "' registered twice");
    variants_.push_back(std::move(v));
  }
  const std::vector<Variant<Args>>& all() const { return variants_; }

  const Variant<Args>& get(const std::string& name) const {
    for (const auto& v : variants_)
      if (v.name == name) return v;
    std::string known;
    for (const auto& v : variants_) known += (known.empty() ? "" : ", ") + v.name;
    fail(family_, ": unknown variant '", name, "' (known: ", known, ")");
  }

  // Variants that can run these arguments on this device.
  std::vector<const Variant<Args>*> eligible(const Args& a, const Device& d) const {
    std::vector<const Variant<Args>*> out;
    for (const auto& v : variants_)
      if (runs_on(v.backend, d) && (!v.eligible || v.eligible(a))) out.push_back(&v);
    return out;
  }
  bool is_eligible(const Variant<Args>& v, const Args& a, const Device& d) const {
    return runs_on(v.backend, d) && (!v.eligible || v.eligible(a));
  }

  // The family's default heuristic: returns a variant name for (args, device). When it is unset
  // or names an ineligible variant, the first eligible variant in registration order is used.
  using Heuristic = std::function<std::string(const Args&, const Device&)>;
  void set_heuristic(Heuristic h) { heuristic_ = std::move(h); }
  const Heuristic& heuristic() const { return heuristic_; }
  std::string heuristic_choice(const Args& a, const Device& d) const {
    if (heuristic_) {
      const std::string name = heuristic_(a, d);
      for (const auto& v : variants_)
        if (v.name == name && is_eligible(v, a, d)) return name;
    }
    const auto el = eligible(a, d);
    TESSERA_CHECK(!el.empty(), family_, ": no variant can run these arguments on ", d.str());
    return el.front()->name;
  }

 private:
  std::string family_;
  std::vector<Variant<Args>> variants_;
  Heuristic heuristic_;
};

}  // namespace tessera::tune
