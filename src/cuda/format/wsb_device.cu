// Upload and per-graph cache of the WSB format. The host builder (src/format/wsb.cpp) does the
// work; this file moves a device CSR to the host once, builds, uploads, and keeps the copy keyed
// by graph identity (never by pointers, which the allocator reuses), bounded by an LRU.
#include "cuda/format/wsb_device.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "tessera/core/cuda_check.hpp"
#include "tessera/core/lru_cache.hpp"

namespace tessera::cuda {

WsbDevice::~WsbDevice() {
  bool any = false;
  for (void* p : owned) any = any || p;
  if (!any) return;
  int prev = 0;
  if (cudaGetDevice(&prev) == cudaSuccess && prev != device) cudaSetDevice(device);
  for (void* p : owned)
    if (p) cudaFree(p);  // a destructor must not throw; cudaFree waits for kernels using p
  if (prev != device) cudaSetDevice(prev);
}

namespace {

struct Key {
  uint64_t id = 0;
  int device = 0;
  IndexType index = IndexType::i32;
  DType tile = DType::f32;
  int weights = 0;  // 0 ones, 1 A.values, 2 per-call values
  bool operator==(const Key&) const = default;
};

// Uploads by graph, device, index and tile type and weights: TESSERA_WSB_CACHE of them (default 8).
using Cache = LruCache<Key, const WsbDevice>;
Cache& cache() {
  static Cache c(env_capacity("TESSERA_WSB_CACHE", 8));
  return c;
}

template <class T>
void* upload(const std::vector<T>& v, cudaStream_t s) {
  if (v.empty()) return nullptr;
  void* p = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&p, v.size() * sizeof(T)));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  return p;
}

template <class I, class T>
void build_and_upload(const CsrView<I>& host, WsbDevice& d, cudaStream_t s, bool per_call) {
  const auto t0 = std::chrono::steady_clock::now();
  format::Wsb<I, T> w;
  w.pattern = format::build_wsb_pattern(host, &w.stats);
  std::vector<int64_t> run_cell, run_ptr, run_entry;
  if (per_call) {
    // Entries sorted by cell; equal cells (duplicate edges) form one run.
    run_entry.resize(size_t(host.nnz));
    for (int64_t k = 0; k < host.nnz; ++k) run_entry[size_t(k)] = k;
    std::stable_sort(run_entry.begin(), run_entry.end(),
                     [&](int64_t a, int64_t b) { return w.pattern.cell[size_t(a)] < w.pattern.cell[size_t(b)]; });
    for (int64_t j = 0; j < host.nnz; ++j) {
      const int64_t c = w.pattern.cell[size_t(run_entry[size_t(j)])];
      if (run_cell.empty() || run_cell.back() != c) run_cell.push_back(c), run_ptr.push_back(j);
    }
    run_ptr.push_back(host.nnz);
  } else {
    w.tiles = format::fill_wsb_tiles<I, T>(w.pattern, host.values, host.nnz);
    w.stats.bytes_tiles = w.tiles.size() * sizeof(T);
  }
  w.stats.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  d.windows = w.pattern.windows();
  d.blocks = w.pattern.blocks();
  d.stats = w.stats;
  d.runs = int64_t(run_cell.size());
  d.owned[0] = upload(w.pattern.window_ptr, s);
  d.owned[1] = upload(w.pattern.block_cols, s);
  d.owned[2] = upload(w.pattern.bitmap, s);
  d.owned[3] = upload(w.tiles, s);
  d.owned[4] = upload(run_cell, s);
  d.owned[5] = upload(run_ptr, s);
  d.owned[6] = upload(run_entry, s);
  // The host vectors die at return: the copies must be complete.
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  d.window_ptr = static_cast<const int64_t*>(d.owned[0]);
  d.block_cols = d.owned[1];
  d.bitmap = static_cast<const uint64_t*>(d.owned[2]);
  d.tiles = d.owned[3];
  d.run_cell = static_cast<const int64_t*>(d.owned[4]);
  d.run_ptr = static_cast<const int64_t*>(d.owned[5]);
  d.run_entry = static_cast<const int64_t*>(d.owned[6]);
}

template <class I>
std::shared_ptr<const WsbDevice> make(const CsrView<I>& A, DType tile, int device, cudaStream_t s,
                                      bool per_call) {
  const auto t0 = std::chrono::steady_clock::now();
  // A host view of the CSR (downloaded once when A lives on the device).
  std::vector<I> rowptr, col;
  std::vector<float> values;
  CsrView<I> h = A;
  if (A.device.is_cuda()) {
    rowptr.resize(size_t(A.rows) + 1);
    col.resize(size_t(A.nnz));
    if (A.values && !per_call) values.resize(size_t(A.nnz));
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(rowptr.data(), A.rowptr, rowptr.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
    if (A.nnz) {
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(col.data(), A.col, col.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
      if (!values.empty())
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(values.data(), A.values, values.size() * sizeof(float),
                                           cudaMemcpyDeviceToHost, s));
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    h.rowptr = rowptr.data();
    h.col = col.data();
    h.values = values.empty() ? nullptr : values.data();
    h.device = Device{};
  }
  auto d = std::make_shared<WsbDevice>();
  d->rows = A.rows;
  d->cols = A.cols;
  d->index = index_of<I>::value;
  d->tile_dtype = tile;
  d->device = device;
  switch (tile) {
    case DType::f16: build_and_upload<I, half_t>(h, *d, s, per_call); break;
    case DType::bf16: build_and_upload<I, bf16_t>(h, *d, s, per_call); break;
    case DType::f32: build_and_upload<I, float>(h, *d, s, per_call); break;
    default: fail("wsb: tile dtype ", dtype_name(tile), " is not supported (float16, bfloat16, float32)");
  }
  d->upload_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return d;
}

}  // namespace

template <class I>
std::shared_ptr<const WsbDevice> wsb_device(const CsrView<I>& A, DType tile_dtype, const Exec& exec,
                                            bool* cache_hit, bool per_call_weights) {
  TESSERA_CHECK(A.id != 0, "wsb: the graph has no identity (id 0); the WSB format is cached per graph "
                "and would be rebuilt on every call");
  int device = A.device.is_cuda() ? A.device.index : exec.device.index;
  const Key key{A.id, device, index_of<I>::value, tile_dtype,
                per_call_weights ? 2 : A.values ? 1 : 0};
  // Built under the cache's lock: builds are rare (once per graph) and concurrent first calls for
  // the same graph must not build twice.
  bool made = false;
  auto d = cache().get_or_make(key, [&] { return make(A, tile_dtype, device, cuda_stream(exec.stream),
                                                      per_call_weights); }, &made);
  if (cache_hit) *cache_hit = !made;
  return d;
}

}  // namespace tessera::cuda

namespace tessera::format {

template <class I>
WsbDeviceInfo wsb_prepare_device(const CsrView<I>& A, DType tile_dtype, const Exec& exec) {
  bool hit = false;
  auto d = cuda::wsb_device(A, tile_dtype, exec, &hit);
  return {d->stats, d->upload_ms, hit};
}
void wsb_device_cache_clear() { cuda::cache().clear(); }
size_t wsb_device_cache_size() { return cuda::cache().size(); }

template WsbDeviceInfo wsb_prepare_device<int32_t>(const CsrView<int32_t>&, DType, const Exec&);
template WsbDeviceInfo wsb_prepare_device<int64_t>(const CsrView<int64_t>&, DType, const Exec&);

}  // namespace tessera::format

namespace tessera::cuda {
template std::shared_ptr<const WsbDevice> wsb_device<int32_t>(const CsrView<int32_t>&, DType, const Exec&, bool*, bool);
template std::shared_ptr<const WsbDevice> wsb_device<int64_t>(const CsrView<int64_t>&, DType, const Exec&, bool*, bool);
}  // namespace tessera::cuda
