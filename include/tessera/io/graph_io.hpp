#pragma once
// Loaders and writers. Every loader throws tessera::Error naming the file and line of the first
// problem ("cora/edges.txt:17: expected 2 or 3 columns, got 1"); none crashes, hangs, or returns
// a partial graph. Every writer writes to "<path>.tmp.<pid>" and renames, so a failure leaves no
// half-written file. Files ending in .gz are read and written through zlib (a truncated or
// corrupt stream is an error). Node counts are checked against the file size before anything is
// allocated from them (a 100-byte file cannot declare 10^12 nodes), lines are capped at 256 MiB.
#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/core/dense.hpp"
#include "tessera/graph/csr.hpp"
#include "tessera/graph/dataset.hpp"

namespace tessera::io {

enum class IdBase : uint8_t { zero, one, auto_detect };

struct EdgeListOptions {
  IdBase base = IdBase::auto_detect;  // auto: 1-based when the smallest id is 1 and no id is 0
  bool remap = false;             // map sparse ids (SNAP) to 0..n-1 in order of first appearance
  int64_t num_nodes = -1;         // -1: max id + 1 (after remapping); else ids must be below it
  bool weighted = false;          // read a third column as weight (error if absent); also on
                                  // when the tessera header below says weighted=1
  char comment = '#';             // also skips '%' lines
  char delimiter = 0;             // 0: whitespace or comma
  bool extra_columns = false;     // accept and ignore columns after `src dst [weight]`
};
// Edge list `src dst [weight]` per line -> edges src -> dst. Lines starting with '#' or '%' and
// blank lines are skipped. A file without any edge (and without the header below) is an error.
// Files written by write_edge_list start with the comment
//   # tessera edge list: nodes=N edges=E base=0 weighted=0|1
// which the reader honours (node count incl. isolated nodes, base, weights) and checks (E).
Coo<int64_t> read_edge_list(const std::string& path, const EdgeListOptions& opt = {});
void write_edge_list(const std::string& path, const CsrView<int64_t>& g);  // `src dst [w]`

// Matrix Market coordinate (real, integer, pattern; general, symmetric or skew-symmetric; the
// symmetric kinds are mirrored). Entry (r, c) is the edge c -> r, so the matrix read is the
// operator's A. Duplicate entries are summed. The entry count must match the size line exactly.
Csr<int64_t> read_matrix_market(const std::string& path);
void write_matrix_market(const std::string& path, const CsrView<int64_t>& g);

// The Planetoid text format of ../shared/data/{cora,citeseer,pubmed} (edges.txt, features.txt or
// features_partial.txt, labels.txt, train/val/test.txt, meta.txt). Checks meta.txt counts.
NodeDataset read_planetoid(const std::string& dir);

// A TU collection: dir holds NAME_A.txt[.gz], NAME_graph_indicator.txt, and optional
// NAME_graph_labels, NAME_node_labels, NAME_edge_labels, NAME_node_attributes, NAME_edge_attributes.
// Each graph gets local ids in node order; its adjacency keeps every line of A (no merging, no
// symmetrization: TU files list both directions), edge_labels[k] is the label of entry k of
// adj.col, and a one-column NAME_edge_attributes becomes adj.values.
GraphCollection read_tu(const std::string& dir);

// Temporal formats of ../shared/data: `t src dst [weight]` (order = "tsd") or `src dst t`
// (order = "sdt", SNAP temporal); signal files with one line per step.
// Ids: "tsd" files are read 0-based; "sdt" (SNAP) files 1-based when the smallest id is 1.
// num_nodes = max id + 1 after the base shift. A 4th column is a weight (all lines or none).
struct TemporalOptions {
  std::string order = "tsd";      // "tsd" or "sdt"
  IdBase base = IdBase::auto_detect;  // auto: zero for "tsd", auto-detected for "sdt"
  bool remap = false;             // map ids to 0..n-1 in order of first appearance
  int64_t num_nodes = -1;         // -1: max id + 1; else ids must be below it
};
TemporalEdges read_temporal_edges(const std::string& path, const std::string& order = "tsd");
TemporalEdges read_temporal_edges(const std::string& path, const TemporalOptions& opt);
// One line per step, one finite value per node, the same width on every line.
NodeSignal read_node_signal(const std::string& path);

// A dense float64 matrix (a Gram matrix): .npy (NumPy format 1.0, '<f8', C order) or .csv[.gz] (a
// row per line, the shortest text that reads back to the same doubles). check_dense_path refuses any other
// name from the path alone, so a command can check its output before it computes anything.
void check_dense_path(const std::string& path);
void write_dense(const std::string& path, const Dense<double>& m);

// Any bytes (a permutation, a JSON report, a cache) to path the same way: a temporary file renamed onto it,
// gzip-compressed when path ends in .gz.
void write_file(const std::string& path, std::string_view bytes);

// Binary cache: versioned header (magic, version, index width, flags), the arrays, and a
// checksum of everything before it. Loading checks all of them and says which failed.
// Layout (little endian): 48-byte header {magic "TSRGRAPH", u32 version, u8 index width (4|8),
// u8 flags (bit 0: weighted), u16 0, i64 rows, cols, nnz, u64 0}, rowptr[rows+1], col[nnz],
// values[nnz] (f32, when weighted), then four 64-bit checksums (header, rowptr, col, values).
// index_width 0 picks 4 bytes when every index fits int32.
struct BinaryOptions {
  int index_width = 0;            // 0 (auto), 4 or 8
};
void write_binary(const std::string& path, const CsrView<int64_t>& g, const BinaryOptions& opt = {});
Csr<int64_t> read_binary(const std::string& path);

// Any supported graph file by extension (.txt/.el/.edges[.gz] edge list, .mtx[.gz], .tsr binary)
// or a directory (Planetoid or TU: the adjacency of the whole collection). Graph files are read
// as directed src -> dst; options.symmetrize etc. apply afterwards.
// A directory with edges.txt[.gz] (the converted data sets of ../shared/data) reads that list
// 0-based (extra columns ignored), with the node count of meta.txt when it names one. A .tsr
// file is returned as stored unless symmetrize or a self-loop change is requested.
Csr<int64_t> read_graph(const std::string& path, const BuildOptions& build = {});
// The same with explicit options for edge-list files (base, remap, weights, delimiter).
Csr<int64_t> read_graph(const std::string& path, const BuildOptions& build,
                        const EdgeListOptions& edge_list);
// Writes by extension (.txt/.el[.gz], .mtx[.gz], .tsr). check_graph_path raises write_graph's error
// for a path it cannot write, from the path alone (before a long generation or reordering).
void write_graph(const std::string& path, const CsrView<int64_t>& g);
void check_graph_path(const std::string& path);

}  // namespace tessera::io
