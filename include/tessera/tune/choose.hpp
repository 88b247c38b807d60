#pragma once
// choose(): the one selection routine every operator family calls with its Registry.
//   1. requested: the `requested` argument, else the environment variable
//      TESSERA_VARIANT_<FAMILY> (upper case, e.g. TESSERA_VARIANT_SPMM). Unknown or ineligible
//      names throw tessera::Error: a forced variant never silently falls back.
//   2. tuning enabled (set_tuning(true) or TESSERA_TUNE=1) and this key not yet tuned in this
//      process: time every eligible variant on the actual arguments, keep the fastest in the
//      persistent cache -> source "tuned" (later calls find it in the cache).
//   3. the persistent cache (`cache`, default Cache::global()), when its entry is still eligible -> "cache".
//   4. the family heuristic -> "heuristic".
// Every choice is logged with record_choice (one entry per family and key).
// Timing runs the variants on the caller's buffers: outputs are overwritten, inputs untouched.
#include <cctype>
#include <cstdlib>
#include <limits>
#include <string>

#include "tessera/tune/registry.hpp"
#include "tessera/tune/tuner.hpp"

namespace tessera::tune {

// Whether choose() times variants (default: TESSERA_TUNE=1 in the environment, else off).
bool tuning_enabled();
void set_tuning(bool on);
// True the first time it is asked for (family, key) in this process while tuning is enabled, so
// a training loop times the variants once per key, not on every call.
bool first_tuning_of(const std::string& family, const Key& key);

// Cached device_name(): the tuner key is built on every call, the CUDA query is not cheap.
const std::string& device_key(const Device& d);

// The name forced through TESSERA_VARIANT_<FAMILY>, or "".
inline std::string requested_from_env(const std::string& family) {
  std::string var = "TESSERA_VARIANT_";
  for (char c : family) var += char(std::toupper(static_cast<unsigned char>(c)));
  const char* e = std::getenv(var.c_str());
  return e ? std::string(e) : std::string();
}

template <class Args>
Choice choose(const Registry<Args>& reg, const Key& key, const Args& args, const Exec& exec,
              const std::string& requested = "", Cache& cache = Cache::global()) {
  const std::string forced = requested.empty() ? requested_from_env(reg.family()) : requested;
  if (!forced.empty()) {
    const auto& v = reg.get(forced);  // throws on unknown names, listing the known ones
    TESSERA_CHECK(reg.is_eligible(v, args, exec.device), reg.family(), ": requested variant '",
                  forced, "' cannot run these arguments on ", exec.device.str(), " (", key.str(), ")");
    Choice c{forced, "requested", 0};
    record_choice(reg.family(), key, c);
    return c;
  }
  if (tuning_enabled() && first_tuning_of(reg.family(), key)) {
    Choice best{"", "tuned", std::numeric_limits<double>::infinity()};
    for (const auto* v : reg.eligible(args, exec.device)) {
      const double ms = time_ms(exec, [&] { v->run(args, exec); });
      if (ms < best.ms) best = {v->name, "tuned", ms};
    }
    TESSERA_CHECK(!best.variant.empty(), reg.family(), ": no eligible variant for ", key.str());
    cache.store(key, best);
    record_choice(reg.family(), key, best);
    return best;
  }
  Choice c;
  if (cache.lookup(key, c)) {
    for (const auto& v : reg.all())
      if (v.name == c.variant && reg.is_eligible(v, args, exec.device)) {
        c.source = "cache";
        record_choice(reg.family(), key, c);
        return c;
      }
  }
  c = {reg.heuristic_choice(args, exec.device), "heuristic", 0};
  record_choice(reg.family(), key, c);
  return c;
}

}  // namespace tessera::tune
