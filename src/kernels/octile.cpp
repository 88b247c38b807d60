// Octile construction from a CSR adjacency.
#include "tessera/kernels/octile.hpp"

#include <algorithm>
#include <map>

#include "tessera/core/error.hpp"

namespace tessera::kernels {

OctileGraph build_octiles(const CsrView<int32_t>& adj, const float* weights, const uint16_t* label_ids) {
  TESSERA_CHECK(adj.rows == adj.cols, "octiles: adjacency must be square, got ", adj.rows, " x ", adj.cols);
  OctileGraph o;
  o.n = adj.rows;
  o.blocks = (adj.rows + kOctile - 1) / kOctile;
  o.row_ptr.assign(size_t(o.blocks + 1), 0);
  o.nz_ptr.push_back(0);
  struct Entry { int bit; float w; uint16_t l; };
  for (int64_t I = 0; I < o.blocks; ++I) {
    // Column block -> entries of this row block, ordered by column block then bit.
    std::map<int64_t, std::vector<Entry>> tiles;
    for (int64_t r = I * kOctile; r < std::min<int64_t>(adj.rows, (I + 1) * kOctile); ++r)
      for (int64_t k = adj.rowptr[r]; k < adj.rowptr[r + 1]; ++k) {
        const int64_t c = adj.col[k];
        TESSERA_CHECK(c >= 0 && c < adj.cols, "octiles: entry ", k, " of row ", r, " has column ", c,
                      " outside [0, ", adj.cols, ")");
        const float w = weights ? weights[k] : 1.0f;
        tiles[c / kOctile].push_back({int((r % kOctile) * kOctile + c % kOctile), w,
                                      label_ids ? label_ids[k] : uint16_t(0)});
      }
    for (auto& [J, entries] : tiles) {
      std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.bit < b.bit; });
      uint64_t mask = 0;
      for (size_t e = 0; e < entries.size(); ++e) {
        TESSERA_CHECK(e == 0 || entries[e].bit != entries[e - 1].bit, "octiles: duplicate entry at row ",
                      I * kOctile + entries[e].bit / kOctile, ", column ", J * kOctile + entries[e].bit % kOctile,
                      " (deduplicate the adjacency first)");
        mask |= uint64_t(1) << entries[e].bit;
        o.weight.push_back(entries[e].w);
        o.label.push_back(entries[e].l);
      }
      o.tile_col.push_back(int32_t(J));
      o.mask.push_back(mask);
      o.nz_ptr.push_back(int32_t(o.weight.size()));
    }
    o.row_ptr[size_t(I + 1)] = int32_t(o.tile_col.size());
  }
  return o;
}

}  // namespace tessera::kernels
