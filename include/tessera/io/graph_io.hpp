#pragma once
// Loaders and writers. Every loader throws tessera::Error naming the file and line of the first
// problem ("cora/edges.txt:17: expected 2 or 3 columns, got 1"); none crashes, hangs, or returns
// a partial graph. Every writer writes to "<path>.tmp.<pid>" and renames, so a failure leaves no
// half-written file. Files ending in .gz are read and written through zlib.
#include <cstdint>
#include <string>

#include "tessera/graph/csr.hpp"
#include "tessera/graph/dataset.hpp"

namespace tessera::io {

enum class IdBase : uint8_t { zero, one, auto_detect };

struct EdgeListOptions {
  IdBase base = IdBase::auto_detect;  // auto: 1-based when the smallest id is 1 and no id is 0
  bool remap = false;             // map sparse ids (SNAP) to 0..n-1 in order of first appearance
  int64_t num_nodes = -1;         // -1: max id + 1 (after remapping); else ids must be below it
  bool weighted = false;          // read a third column as weight (error if absent)
  char comment = '#';             // also skips '%' lines
  char delimiter = 0;             // 0: whitespace or comma
};
// Edge list `src dst [weight]` per line -> edges src -> dst.
Coo<int64_t> read_edge_list(const std::string& path, const EdgeListOptions& opt = {});
void write_edge_list(const std::string& path, const CsrView<int64_t>& g);  // `src dst [w]`

// Matrix Market coordinate (real, integer, pattern; general or symmetric). Entry (r, c) is the
// edge c -> r, so the matrix read is the operator's A.
Csr<int64_t> read_matrix_market(const std::string& path);
void write_matrix_market(const std::string& path, const CsrView<int64_t>& g);

// The Planetoid text format of ../shared/data/{cora,citeseer,pubmed} (edges.txt, features.txt or
// features_partial.txt, labels.txt, train/val/test.txt, meta.txt). Checks meta.txt counts.
NodeDataset read_planetoid(const std::string& dir);

// A TU collection: dir holds NAME_A.txt[.gz], NAME_graph_indicator.txt, and optional
// NAME_graph_labels, NAME_node_labels, NAME_edge_labels, NAME_node_attributes, NAME_edge_attributes.
GraphCollection read_tu(const std::string& dir);

// Temporal formats of ../shared/data: `t src dst [weight]` (order = "tsd") or `src dst t`
// (order = "sdt", SNAP temporal); signal files with one line per step.
TemporalEdges read_temporal_edges(const std::string& path, const std::string& order = "tsd");
NodeSignal read_node_signal(const std::string& path);

// Binary cache: versioned header (magic, version, index width, flags), the arrays, and a
// checksum of everything before it. Loading checks all of them and says which failed.
void write_binary(const std::string& path, const CsrView<int64_t>& g);
Csr<int64_t> read_binary(const std::string& path);

// Any supported graph file by extension (.txt/.el/.edges[.gz] edge list, .mtx[.gz], .tsr binary)
// or a directory (Planetoid or TU: the adjacency of the whole collection). Graph files are read
// as directed src -> dst; options.symmetrize etc. apply afterwards.
Csr<int64_t> read_graph(const std::string& path, const BuildOptions& build = {});
// Writes by extension (.txt/.el[.gz], .mtx[.gz], .tsr).
void write_graph(const std::string& path, const CsrView<int64_t>& g);

}  // namespace tessera::io
