#pragma once
// Internals shared by the orders of src/reorder (not part of the public API): the symmetrized
// adjacency, RCM on it, the METIS part of every node, and the tile count every order is judged by.
#include <cstdint>
#include <vector>

#include "tessera/graph/csr.hpp"

namespace tessera::reorder::detail {

using Adjacency = std::vector<std::vector<int64_t>>;

// Symmetrized pattern without self loops, neighbours sorted and unique; throws unless square.
template <class I> Adjacency undirected(const CsrView<I>& g);
// Reverse Cuthill-McKee: old ids in the new order (deterministic: ties by degree, then id).
std::vector<int64_t> rcm_order(const Adjacency& adj);
// METIS k-way part (0..parts-1) of every node, seeded so it is deterministic. Throws without METIS.
std::vector<int64_t> metis_parts(const Adjacency& adj, int64_t parts);
// Non-empty tr x tc tiles of g.
template <class I> int64_t nonempty_tiles(const CsrView<I>& g, int tr, int tc);

}  // namespace tessera::reorder::detail
