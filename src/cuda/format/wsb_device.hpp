#pragma once
// Device-resident WSB copies (see include/tessera/format/wsb.hpp), cached per graph. Internal to
// the CUDA backend: kernels take WsbDevice pointers; everyone else uses wsb_prepare_device().
#include <cstdint>
#include <memory>

#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/format/wsb.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::cuda {

// One uploaded format. Freed (cudaFree, which waits for in-flight kernels) when the last
// holder drops it, so eviction from the cache never pulls memory from under a running kernel
// of a caller that still holds the shared_ptr.
struct WsbDevice {
  int64_t rows = 0, cols = 0, windows = 0, blocks = 0;
  IndexType index = IndexType::i32;
  DType tile_dtype = DType::f32;
  const int64_t* window_ptr = nullptr;  // windows + 1
  const void* block_cols = nullptr;     // blocks * 8 of the graph's index type
  const uint64_t* bitmap = nullptr;     // blocks * 2
  const void* tiles = nullptr;          // blocks * 128 of tile_dtype
  // Per-call weights (SpmmArgs::values): the occupied cells as runs of CSR entries sorted by
  // cell, so tiles can be re-derived from any nnz-array without atomics (duplicates are summed
  // within a run). Present only in copies made for per-call weights; `tiles` is then null.
  int64_t runs = 0;
  const int64_t* run_cell = nullptr;    // runs: tile cell (block * 128 + r * 8 + c)
  const int64_t* run_ptr = nullptr;     // runs + 1 offsets into run_entry
  const int64_t* run_entry = nullptr;   // nnz CSR entry ids
  format::WsbStats stats;
  double upload_ms = 0;
  ~WsbDevice();
  void* owned[7] = {};
  int device = 0;
};

// The cached copy of A's format with tiles of tile_dtype, built on first use. Weights: A.values
// or ones; with per_call_weights the copy holds the refill runs instead of tiles. A may live on
// the host or on the device; A.id must be non-zero.
template <class I>
std::shared_ptr<const WsbDevice> wsb_device(const CsrView<I>& A, DType tile_dtype, const Exec& exec,
                                            bool* cache_hit = nullptr, bool per_call_weights = false);

}  // namespace tessera::cuda
