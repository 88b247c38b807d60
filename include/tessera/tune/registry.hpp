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

 private:
  std::string family_;
  std::vector<Variant<Args>> variants_;
};

}  // namespace tessera::tune
