#pragma once
// Sparse graphs. Convention used by every operator: CSR row i holds the in-neighbours of node i
// (the sources j of edges j -> i), so Y = A X aggregates messages at their targets, as PyG does
// with edge_index = [src; dst]. Csr<I> owns host memory; CsrView<I> borrows (host or device).
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"

namespace tessera {

// A process-unique identity for a graph's contents, used as the key of per-graph caches
// (cuSPARSE descriptors, WSB blocks, tuner results) instead of pointers that can be reused.
// 0 means "anonymous": caches are bypassed.
uint64_t new_graph_id();

template <class I>
struct CsrView {
  int64_t rows = 0, cols = 0, nnz = 0;
  const I* rowptr = nullptr;      // rows + 1 entries, rowptr[0] = 0, rowptr[rows] = nnz
  const I* col = nullptr;         // nnz entries, each in [0, cols)
  const float* values = nullptr;  // optional edge weights (nnz), nullptr = all ones
  Device device{};
  uint64_t id = 0;
};

template <class I>
struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<I> rowptr{I(0)};
  std::vector<I> col;
  std::vector<float> values;      // empty = unweighted
  uint64_t id = new_graph_id();

  int64_t nnz() const { return int64_t(col.size()); }
  bool weighted() const { return !values.empty(); }
  CsrView<I> view() const {
    return {rows, cols, nnz(), rowptr.data(), col.data(), weighted() ? values.data() : nullptr,
            Device{}, id};
  }
  // Call after mutating the arrays so caches keyed by the old id are not reused.
  void touch() { id = new_graph_id(); }
};

// Coordinate list: edge k goes src[k] -> dst[k] with optional weight w[k].
template <class I>
struct Coo {
  int64_t rows = 0, cols = 0;     // rows = number of targets, cols = number of sources
  std::vector<I> src, dst;
  std::vector<float> w;           // empty = unweighted
  int64_t nnz() const { return int64_t(src.size()); }
};

enum class SelfLoops : uint8_t { keep, remove, add };  // add = remove then one per node

struct BuildOptions {
  bool symmetrize = false;        // add the reverse of every edge
  bool deduplicate = true;        // merge parallel edges (weights are summed)
  SelfLoops self_loops = SelfLoops::keep;
  float self_loop_weight = 1.0f;  // weight of added loops
};

// Builds the in-neighbour CSR (rows = targets) from an edge list: sorts columns within rows,
// then applies the options. Validates ids against rows/cols and throws tessera::Error naming
// the first bad edge ("edge 17: source 12 out of range [0, 10)") and NaN weights.
template <class I> Csr<I> build_csr(const Coo<I>& coo, const BuildOptions& opt = {});

// Checks rowptr monotone with rowptr[0] = 0 and rowptr[rows] = nnz, column ids in range, no NaN
// weights; throws tessera::Error naming the row or entry ("non-monotone offsets at row 5").
template <class I> void validate(const CsrView<I>& g);

// Transpose (the CSC of g viewed as CSR): out-neighbour lists, columns sorted.
template <class I> Csr<I> transpose(const CsrView<I>& g);
template <class I> Coo<I> to_coo(const CsrView<I>& g);
// Index-type conversion; int64 -> int32 throws when the graph does not fit.
template <class To, class From> Csr<To> convert_index(const Csr<From>& g);

// In-degree (row length) of every node.
template <class I> std::vector<int64_t> row_degrees(const CsrView<I>& g);

}  // namespace tessera
