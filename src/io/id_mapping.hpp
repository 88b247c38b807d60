#pragma once
// Node-id resolution shared by the edge-list and temporal loaders: 0/1-based (or auto-detected)
// ids, optional remapping of sparse (SNAP) ids, and the range check against the node count.
// Ids are collected first and checked afterwards (the base may only be known at the end), so an
// error re-reads the file to name the line of the offending record.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/io/graph_io.hpp"

namespace tessera::io::detail {

struct IdColumn {
  std::vector<int64_t>* ids;
  const char* name;               // "source", "target"
};

struct IdResolution {
  IdBase base = IdBase::auto_detect;  // resolved: zero or one (auto: one iff min id is 1)
  bool remap = false;
  int64_t num_nodes = -1;         // -1: max id + 1 after the shift
};

// Shifts / remaps the columns in place and returns the node count. min_id / max_id are over all
// columns as read. file_bytes / gzipped bound a plausible node count.
int64_t resolve_ids(const std::string& path, char comment, const std::vector<IdColumn>& cols,
                    IdResolution res, int64_t min_id, int64_t max_id, uint64_t file_bytes,
                    bool gzipped);

// 1-based line number of the k-th data record (0-based k; comments and blank lines skipped).
int64_t line_of_record(const std::string& path, char comment, int64_t k);

}  // namespace tessera::io::detail
