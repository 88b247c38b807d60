#include "io/id_mapping.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "io/text_input.hpp"

namespace tessera::io::detail {

int64_t line_of_record(const std::string& path, char comment, int64_t k) {
  LineReader in(path);
  std::string_view line;
  int64_t seen = 0;
  while (in.next(line)) {
    if (is_comment_or_blank(line, comment)) continue;
    if (seen++ == k) return in.line_number();
  }
  return in.line_number();
}

namespace {
[[noreturn]] void fail_record(const std::string& path, char comment, int64_t k, const char* name,
                              int64_t raw, const std::string& why) {
  fail(path, ":", line_of_record(path, comment, k), ": ", name, " id ", raw, " ", why);
}

// Sparse ids -> 0..n-1 in order of first appearance (row by row, source before target).
int64_t remap_ids(const std::vector<IdColumn>& cols, int64_t max_id) {
  const size_t records = cols.empty() ? 0 : cols[0].ids->size();
  const uint64_t total = uint64_t(records) * cols.size();
  int64_t next = 0;
  if (uint64_t(max_id) <= 4 * total + (uint64_t(1) << 20)) {
    // Dense table: ids are not much sparser than the records that name them.
    std::vector<int64_t> table(size_t(max_id) + 1, -1);
    for (size_t r = 0; r < records; ++r)
      for (const auto& c : cols) {
        int64_t& slot = table[size_t((*c.ids)[r])];
        if (slot < 0) slot = next++;
        (*c.ids)[r] = slot;
      }
  } else {
    std::unordered_map<int64_t, int64_t> table;
    table.reserve(size_t(std::min<uint64_t>(total, uint64_t(1) << 24)));
    for (size_t r = 0; r < records; ++r)
      for (const auto& c : cols) {
        auto [it, fresh] = table.try_emplace((*c.ids)[r], next);
        if (fresh) ++next;
        (*c.ids)[r] = it->second;
      }
  }
  return next;
}
}  // namespace

int64_t resolve_ids(const std::string& path, char comment, const std::vector<IdColumn>& cols,
                    IdResolution res, int64_t min_id, int64_t max_id, uint64_t file_bytes,
                    bool gzipped) {
  const size_t records = cols.empty() ? 0 : cols[0].ids->size();
  if (res.num_nodes >= 0) check_node_count(path, res.num_nodes, file_bytes, gzipped, "node count");

  if (res.remap) {
    if (records == 0) return res.num_nodes >= 0 ? res.num_nodes : 0;
    const int64_t n = remap_ids(cols, max_id);
    if (res.num_nodes >= 0 && n > res.num_nodes)
      fail(path, ": ", n, " distinct node ids but the node count is ", res.num_nodes);
    return res.num_nodes >= 0 ? res.num_nodes : n;
  }

  IdBase base = res.base;
  if (base == IdBase::auto_detect) base = (records > 0 && min_id == 1) ? IdBase::one : IdBase::zero;
  const int64_t shift = base == IdBase::one ? 1 : 0;
  const int64_t n = res.num_nodes >= 0 ? res.num_nodes : (records > 0 ? max_id + 1 - shift : 0);
  if (res.num_nodes < 0) {
    // The largest id decides the node count: refuse one that would allocate absurd offsets.
    const uint64_t limit = plausible_node_limit(file_bytes, gzipped);
    if (uint64_t(n) > limit) {
      for (size_t r = 0; r < records; ++r)
        for (const auto& c : cols)
          if ((*c.ids)[r] == max_id)
            fail_record(path, comment, int64_t(r), c.name, max_id,
                        "implies " + std::to_string(n) + " nodes, implausible for a file of " +
                            std::to_string(file_bytes) + " bytes (remap sparse ids)");
    }
  }
  for (size_t r = 0; r < records; ++r) {
    for (const auto& c : cols) {
      const int64_t raw = (*c.ids)[r];
      const int64_t id = raw - shift;
      if (id < 0) fail_record(path, comment, int64_t(r), c.name, raw, "is 0 in a 1-based file");
      if (id >= n)
        fail_record(path, comment, int64_t(r), c.name, raw,
                    "out of range: the graph has " + std::to_string(n) + " nodes" +
                        (shift ? " (1-based ids)" : ""));
      (*c.ids)[r] = id;
    }
  }
  return n;
}

}  // namespace tessera::io::detail
