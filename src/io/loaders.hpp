#pragma once
// Internal entry points shared between the format files and read_graph's dispatch.
#include <string>

#include "tessera/graph/csr.hpp"

namespace tessera::io::detail {

// Matrix Market as an edge list (entry (r, c) = edge c -> r; symmetric files mirrored).
Coo<int64_t> read_matrix_market_coo(const std::string& path);
// A TU collection's whole adjacency (block diagonal over its graphs), 0-based global ids.
Coo<int64_t> read_tu_adjacency(const std::string& dir);
// The file of a TU collection named NAME_<suffix>.txt or .txt.gz, or "" when absent.
std::string tu_file(const std::string& dir, const std::string& name, const std::string& suffix);
// NAME of the TU collection in dir (from NAME_A.txt[.gz]); throws when there is none.
std::string tu_name(const std::string& dir);

}  // namespace tessera::io::detail
