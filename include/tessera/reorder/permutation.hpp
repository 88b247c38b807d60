#pragma once
// Node orderings as permutation objects. A Permutation maps old node ids to new ones; apply() to a
// graph gives the relabeled graph, and gather()/scatter() move per-node data into the new order
// and back, so an operator can run on a reordered graph and hand results back in the caller's
// order. General over CsrView<I> (graph kernels and GNN operators both use it).
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::reorder {

class Permutation {
 public:
  Permutation() = default;
  static Permutation identity(int64_t n);
  // From old_of_new[k] = the old id placed at position k. Throws unless it is a permutation.
  static Permutation from_order(std::vector<int64_t> old_of_new);

  int64_t size() const { return int64_t(old_of_new_.size()); }
  int64_t new_of_old(int64_t old_id) const { return new_of_old_[size_t(old_id)]; }
  int64_t old_of_new(int64_t new_id) const { return old_of_new_[size_t(new_id)]; }
  const std::vector<int64_t>& order() const { return old_of_new_; }
  Permutation inverse() const;
  bool is_identity() const;

  // B = P A P^T: row/column new_of_old(i) of B is row/column i of A. Columns stay sorted; values
  // move with their entries. `entry_map` (optional) receives, per entry of B, the index of that
  // entry in A, so per-edge data (labels) can follow.
  template <class I>
  Csr<I> apply(const CsrView<I>& g, std::vector<int64_t>* entry_map = nullptr) const;

  // out[new_of_old(i)] = in[i] (rows of `width` values each).
  template <class T>
  std::vector<T> gather(const std::vector<T>& in, int64_t width = 1) const {
    TESSERA_CHECK(int64_t(in.size()) == size() * width, "Permutation::gather: ", in.size(),
                  " values for ", size(), " nodes x ", width);
    std::vector<T> out(in.size());
    for (int64_t i = 0; i < size(); ++i)
      for (int64_t k = 0; k < width; ++k)
        out[size_t(new_of_old_[size_t(i)] * width + k)] = in[size_t(i * width + k)];
    return out;
  }
  // Undoes gather: out[i] = in[new_of_old(i)].
  template <class T>
  std::vector<T> scatter(const std::vector<T>& in, int64_t width = 1) const {
    TESSERA_CHECK(int64_t(in.size()) == size() * width, "Permutation::scatter: ", in.size(),
                  " values for ", size(), " nodes x ", width);
    std::vector<T> out(in.size());
    for (int64_t i = 0; i < size(); ++i)
      for (int64_t k = 0; k < width; ++k)
        out[size_t(i * width + k)] = in[size_t(new_of_old_[size_t(i)] * width + k)];
    return out;
  }

 private:
  std::vector<int64_t> old_of_new_, new_of_old_;
};

enum class Method : uint8_t { none, rcm, partition };
Method parse_method(const std::string& name);  // "none", "rcm", "partition"/"metis"
const char* method_name(Method m);

// Reverse Cuthill-McKee on the symmetrized pattern of g (each connected component from a
// pseudo-peripheral node of minimum degree; ties by node id, so the order is deterministic).
template <class I> Permutation rcm(const CsrView<I>& g);
// METIS k-way partition of the symmetrized pattern into parts of about `part_size` nodes, parts
// laid out one after another, RCM inside each part. Without METIS (TESSERA_WITH_METIS unset)
// throws tessera::Error saying so.
template <class I> Permutation partition_order(const CsrView<I>& g, int64_t part_size = 64);
template <class I> Permutation compute_order(const CsrView<I>& g, Method m);
bool metis_available();

// Number of non-empty tr x tc tiles of g: what the reordering tries to minimize.
template <class I> int64_t count_tiles(const CsrView<I>& g, int tr = 8, int tc = 8);

}  // namespace tessera::reorder
