#pragma once
// Locality study ("dot-aggr" of the seed paper, reproduced): one warp per node computes
// Y[i, :] = sum over the row's entries k of X[col[k], :] (unweighted sum, f32), in two mappings
// that do the same additions in a different order of memory accesses:
//   feature_parallel   : lanes along features (coalesced row segments), neighbours in sequence;
//   neighbour_parallel : lanes gather different neighbours (32-byte row pieces each), then the
//                        warp reduces across lanes with shuffles.
// Each with scalar (4-byte) or vector (16-byte float4) loads. Reordering changes only which rows
// are gathered together, so timing both mappings on original and reordered ids isolates how much
// each mapping profits from locality.
#include <cstdint>

#include "tessera/core/device.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::cuda::study {

enum class Mapping : uint8_t { feature_parallel, neighbour_parallel };
enum class Load : uint8_t { scalar, vec16 };
inline const char* mapping_name(Mapping m) { return m == Mapping::feature_parallel ? "feature" : "neighbour"; }
inline const char* load_name(Load l) { return l == Load::scalar ? "scalar" : "vec16"; }

// Neighbour-parallel lanes own 8 consecutive features at a time (32 bytes: one sector).
constexpr int64_t kNeighbourTile = 8;

// Whether (F, load, mapping) can run: F >= 1; vec16 needs F % 4 == 0; neighbour_parallel needs
// F % 8 == 0 (its feature tile).
bool supports(int64_t F, Mapping m, Load l);

// A: CSR on exec's CUDA device (int32 indices); X: A.cols x F, Y: A.rows x F, contiguous f32 on
// the same device, 16-byte aligned for vec16 (cudaMalloc'ed buffers are). Runs on exec's stream.
// Throws tessera::Error on unsupported shapes or a host graph.
void aggregate_sum(const CsrView<int32_t>& A, const float* X, float* Y, int64_t F, Mapping m, Load l,
                   const Exec& exec);

}  // namespace tessera::cuda::study
