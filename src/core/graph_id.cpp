#include <atomic>

#include "tessera/graph/csr.hpp"

namespace tessera {

uint64_t new_graph_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tessera
