// cuSPARSE SpMM with a per-graph cache.
//
// Cache key: (graph id, value type, index type, device, stream). The graph id (CsrView::id) names
// the graph's contents, so a freed-and-reused pointer can never hit a stale entry; id 0 means
// "anonymous" and bypasses the cache (fresh descriptor, default algorithm, scratch workspace).
// The stream is part of the key because an entry's workspace is used asynchronously on it.
// Each entry holds: the CSR descriptor (its pointers refreshed per call with cusparseCsrSetPointers,
// since the caller may pass new normalized values for the same graph), the edge weights when they
// must be materialized (ones for unweighted graphs, double copies of float weights for float64),
// the workspace, and per feature width the algorithm chosen by timing CSR_ALG1/ALG2/ALG3 once.
// The cache is a bounded LRU (default 16 entries, TESSERA_CUSPARSE_CACHE_ENTRIES), thread-safe,
// and clearable (spmm_clear_caches()). Every cuSPARSE status is checked (TESSERA_CUSPARSE_CHECK).
// The caller's current CUDA device must be exec.device (the torch layer's device guard does this).
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/ops/spmm_kernels.cuh"
#include "ops/spmm/alignment.hpp"
#include "ops/spmm/variants.hpp"
#include "tessera/core/cuda_check.hpp"
#include "tessera/core/lru_cache.hpp"

namespace tessera::ops::cuda {

namespace {
cudaDataType value_type(DType t) { return t == DType::f64 ? CUDA_R_64F : CUDA_R_32F; }
template <class I> cusparseIndexType_t index_type() {
  return sizeof(I) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
}

// One handle per thread and device (cuSPARSE handles must not be shared across threads). They
// are intentionally never destroyed: destruction at thread/process exit can run after the CUDA
// context is gone.
cusparseHandle_t handle_for(int device) {
  thread_local std::map<int, cusparseHandle_t> handles;
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cusparseHandle_t h = nullptr;
  TESSERA_CUSPARSE_CHECK(cusparseCreate(&h));
  handles[device] = h;
  return h;
}

struct DeviceBuffer {  // cudaMalloc'ed: lives as long as its cache entry, not a hot-path allocation
  void* ptr = nullptr;
  size_t bytes = 0;
  void reserve(size_t n) {
    if (n <= bytes) return;
    release();
    TESSERA_CUDA_CHECK(cudaMalloc(&ptr, n));
    bytes = n;
  }
  void release() noexcept {
    if (ptr) cudaFree(ptr);  // synchronizes with work still using it
    ptr = nullptr;
    bytes = 0;
  }
  ~DeviceBuffer() { release(); }
};

struct Entry {
  std::mutex mu;
  cusparseSpMatDescr_t mat = nullptr;
  DeviceBuffer weights;       // materialized weights (ones / float->double), when needed
  bool weights_ready = false;
  DeviceBuffer workspace;
  std::map<int64_t, cusparseSpMMAlg_t> alg_by_width;
  ~Entry() {
    if (mat) cusparseDestroySpMat(mat);
  }
};

struct CacheKey {
  uint64_t id;
  int dtype, itype, device;
  cudaStream_t stream;
  bool operator==(const CacheKey&) const = default;
};

// Entries in use by another thread stay alive through their shared_ptr when evicted or cleared.
using DescriptorCache = LruCache<CacheKey, Entry>;

DescriptorCache& cache() {
  // Leaked: see handle_for.
  static DescriptorCache* c = new DescriptorCache(env_capacity("TESSERA_CUSPARSE_CACHE_ENTRIES", 16));
  return *c;
}

struct DnMat {  // RAII for the per-call dense descriptors (host objects, cheap)
  cusparseDnMatDescr_t d = nullptr;
  DnMat(const DenseView& v) {
    TESSERA_CUSPARSE_CHECK(cusparseCreateDnMat(&d, v.rows, v.cols, v.ld, v.data, value_type(v.dtype),
                                               CUSPARSE_ORDER_ROW));
  }
  ~DnMat() {
    if (d) cusparseDestroyDnMat(d);
  }
};

// The weights to hand cuSPARSE: explicit values (already the value type), A.values when the types
// agree, else a materialized array (ones, or float -> double) in `buf`.
template <class I>
void* weights_for(const SpmmArgs<I>& a, DeviceBuffer& buf, bool& ready, cudaStream_t s) {
  if (a.values) return const_cast<void*>(a.values);
  const bool f64 = a.X.dtype == DType::f64;
  if (a.A.values && !f64) return const_cast<float*>(a.A.values);
  if (ready) return buf.ptr;  // contents depend only on the graph (its id) and the value type
  ready = true;
  const size_t es = f64 ? 8 : 4;
  buf.reserve(std::max<size_t>(1, size_t(a.A.nnz) * es));
  const int64_t n = a.A.nnz;
  const unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 4096));
  if (n == 0) return buf.ptr;
  if (a.A.values)
    kernels::convert_kernel<double><<<blocks, 256, 0, s>>>(static_cast<double*>(buf.ptr), a.A.values, n);
  else if (f64)
    kernels::fill_kernel<double><<<blocks, 256, 0, s>>>(static_cast<double*>(buf.ptr), n, 1.0);
  else
    kernels::fill_kernel<float><<<blocks, 256, 0, s>>>(static_cast<float*>(buf.ptr), n, 1.0f);
  TESSERA_CUDA_LAUNCH_CHECK();
  return buf.ptr;
}

// cuSPARSE 12's row-major SpMM kernels use vector accesses on the dense rows and fault with
// cudaErrorMisalignedAddress (asynchronously, inside the library) when a row of B or C does not
// start on a 16-byte boundary: ld * sizeof(T) % 16 != 0 (e.g. width 1/3/5 contiguous float
// matrices, or strided views) or an offset base pointer. Such operands are staged through a
// scratch copy with an aligned leading dimension; C is copied back with cudaMemcpy2DAsync, which
// writes only the `cols` columns of each row (the caller's padding stays untouched).
constexpr size_t kCusparseRowAlign = 16;

struct StagedDense {
  DenseView view;                  // what cuSPARSE sees
  std::unique_ptr<Scratch> buf;    // set when staged
  bool staged() const { return buf != nullptr; }
};

StagedDense stage(const DenseView& v, bool copy_in, const Exec& exec, cudaStream_t s) {
  StagedDense out{v, nullptr};
  if (rows_vector_aligned(v, kCusparseRowAlign)) return out;
  const size_t es = dtype_size(v.dtype);
  out.view.ld = aligned_ld(v.cols, es, kCusparseRowAlign);
  out.buf = std::make_unique<Scratch>(exec, std::max<size_t>(1, size_t(std::max<int64_t>(v.rows, 1)) *
                                                                    size_t(out.view.ld) * es));
  out.view.data = out.buf->get();
  TESSERA_CHECK(rows_vector_aligned(out.view, kCusparseRowAlign),
                "spmm (cuda.cusparse): scratch allocation is not 16-byte aligned");
  if (copy_in && v.rows > 0 && v.cols > 0)
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(out.view.data, size_t(out.view.ld) * es, v.data, size_t(v.ld) * es,
                                         size_t(v.cols) * es, size_t(v.rows), cudaMemcpyDeviceToDevice, s));
  return out;
}

void unstage(const StagedDense& st, const DenseView& dst, cudaStream_t s) {
  if (!st.staged() || dst.rows == 0 || dst.cols == 0) return;
  const size_t es = dtype_size(dst.dtype);
  TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, size_t(dst.ld) * es, st.view.data, size_t(st.view.ld) * es,
                                       size_t(dst.cols) * es, size_t(dst.rows), cudaMemcpyDeviceToDevice, s));
}

// The CSR arrays get the same treatment: a 16-byte aligned per-call copy when a caller passes an
// offset pointer (a sliced tensor). Our own allocations (cudaMalloc / pool) are always aligned.
template <class P>
P* aligned_array(P* p, size_t bytes, std::unique_ptr<Scratch>& keep, const Exec& exec, cudaStream_t s) {
  if (!p || bytes == 0 || reinterpret_cast<uintptr_t>(p) % kCusparseRowAlign == 0) return p;
  keep = std::make_unique<Scratch>(exec, bytes);
  TESSERA_CHECK(reinterpret_cast<uintptr_t>(keep->get()) % kCusparseRowAlign == 0,
                "spmm (cuda.cusparse): scratch allocation is not 16-byte aligned");
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(keep->get(), p, bytes, cudaMemcpyDeviceToDevice, s));
  return static_cast<P*>(keep->get());
}

struct Scalars {
  double d1 = 1, d0 = 0;
  float f1 = 1, f0 = 0;
  const void* one(DType t) const { return t == DType::f64 ? static_cast<const void*>(&d1) : &f1; }
  const void* zero(DType t) const { return t == DType::f64 ? static_cast<const void*>(&d0) : &f0; }
};

// Times ALG1/ALG2/ALG3 on these operands and returns the fastest that cuSPARSE accepts.
cusparseSpMMAlg_t pick_algorithm(cusparseHandle_t h, cusparseSpMatDescr_t mat, const DnMat& B,
                                 const DnMat& C, DType t, DeviceBuffer& ws, cudaStream_t s) {
  const Scalars sc;
  const cudaDataType ct = value_type(t);
  const cusparseSpMMAlg_t algs[] = {CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
  cusparseSpMMAlg_t best = CUSPARSE_SPMM_ALG_DEFAULT;
  float best_ms = 0;
  std::string rejected;
  CudaEventPair ev;
  for (auto alg : algs) {
    size_t bytes = 0;
    cusparseStatus_t st = cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                  sc.one(t), mat, B.d, sc.zero(t), C.d, ct, alg, &bytes);
    if (st == CUSPARSE_STATUS_SUCCESS) {
      ws.reserve(bytes);
      // Warm-up run doubles as the support check (some algorithms reject row-major or int64).
      st = cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, sc.one(t), mat, B.d,
                        sc.zero(t), C.d, ct, alg, ws.ptr);
    }
    if (st != CUSPARSE_STATUS_SUCCESS) {
      rejected += std::string(" alg ") + std::to_string(int(alg)) + ": " + cusparseGetErrorName(st);
      continue;
    }
    // Once per graph and width: wait for the warm-up so an asynchronous fault inside cuSPARSE is
    // reported with the algorithm and the operand shapes (it is sticky: nothing can follow it).
    if (const cudaError_t err = cudaStreamSynchronize(s); err != cudaSuccess) {
      int64_t rows = 0, cols = 0, ld = 0;
      void* p = nullptr;
      cudaDataType dt{};
      cusparseOrder_t order{};
      cusparseDnMatGet(B.d, &rows, &cols, &ld, &p, &dt, &order);
      fail("spmm (cuda.cusparse): CUDA error ", cudaGetErrorName(err), " (", cudaGetErrorString(err),
           ") in cusparseSpMM with algorithm ", int(alg), " (X ", rows, " x ", cols, ", ld ", ld, ", data ", p,
           ")");
    }
    ev.start(s);
    constexpr int kReps = 3;
    for (int r = 0; r < kReps; ++r)
      TESSERA_CUSPARSE_CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          sc.one(t), mat, B.d, sc.zero(t), C.d, ct, alg, ws.ptr));
    ev.stop(s);
    const float ms = ev.elapsed_ms();
    if (best == CUSPARSE_SPMM_ALG_DEFAULT || ms < best_ms) best = alg, best_ms = ms;
  }
  TESSERA_CHECK(best != CUSPARSE_SPMM_ALG_DEFAULT, "spmm (cuda.cusparse): no CSR algorithm accepted the operands:",
                rejected);
  return best;
}

void run_spmm(cusparseHandle_t h, cusparseSpMatDescr_t mat, const DnMat& B, const DnMat& C, DType t,
              cusparseSpMMAlg_t alg, DeviceBuffer* cached_ws, const Exec& exec) {
  const Scalars sc;
  const cudaDataType ct = value_type(t);
  size_t bytes = 0;
  TESSERA_CUSPARSE_CHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                 CUSPARSE_OPERATION_NON_TRANSPOSE, sc.one(t), mat, B.d,
                                                 sc.zero(t), C.d, ct, alg, &bytes));
  void* ws = nullptr;
  std::unique_ptr<Scratch> scratch;
  if (cached_ws) {
    cached_ws->reserve(bytes);
    ws = cached_ws->ptr;
  } else if (bytes) {
    scratch = std::make_unique<Scratch>(exec, bytes);
    ws = scratch->get();
  }
  TESSERA_CUSPARSE_CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      sc.one(t), mat, B.d, sc.zero(t), C.d, ct, alg, ws));
}
}  // namespace

bool cusparse_supports(DType t) { return t == DType::f32 || t == DType::f64; }

template <class I>
void spmm_cusparse(const SpmmArgs<I>& a, const Exec& exec) {
  TESSERA_CHECK(cusparse_supports(a.X.dtype), "spmm: cuda.cusparse supports float32 and float64, got ",
                dtype_name(a.X.dtype));
  if (a.A.rows == 0 || a.X.cols == 0) return;
  const cudaStream_t s = cuda_stream(exec.stream);
  cusparseHandle_t h = handle_for(exec.device.index);
  TESSERA_CUSPARSE_CHECK(cusparseSetStream(h, s));
  // Staged copies (when rows are not 16-byte aligned) live until the end of this call; their
  // stream-ordered release is safe with the SpMM still queued on `s`.
  const StagedDense Xs = stage(a.X, true, exec, s), Ys = stage(a.Y, false, exec, s);
  const DnMat B(Xs.view), C(Ys.view);
  const cudaDataType vt = value_type(a.X.dtype);
  std::unique_ptr<Scratch> rowptr_copy, col_copy, weights_copy;
  auto* rowptr = aligned_array(const_cast<I*>(a.A.rowptr), size_t(a.A.rows + 1) * sizeof(I), rowptr_copy, exec, s);
  auto* col = aligned_array(const_cast<I*>(a.A.col), size_t(a.A.nnz) * sizeof(I), col_copy, exec, s);
  const size_t weight_bytes = size_t(a.A.nnz) * (a.X.dtype == DType::f64 ? 8 : 4);

  if (a.A.id == 0) {  // anonymous graph: nothing is cached
    DeviceBuffer weights;
    bool ready = false;
    void* w = aligned_array(weights_for(a, weights, ready, s), weight_bytes, weights_copy, exec, s);
    cusparseSpMatDescr_t mat = nullptr;
    TESSERA_CUSPARSE_CHECK(cusparseCreateCsr(&mat, a.A.rows, a.A.cols, a.A.nnz, rowptr, col, w, index_type<I>(),
                                             index_type<I>(), CUSPARSE_INDEX_BASE_ZERO, vt));
    std::unique_ptr<std::remove_pointer_t<cusparseSpMatDescr_t>, void (*)(cusparseSpMatDescr_t)> guard(
        mat, [](cusparseSpMatDescr_t m) { cusparseDestroySpMat(m); });
    run_spmm(h, mat, B, C, a.X.dtype, CUSPARSE_SPMM_ALG_DEFAULT, nullptr, exec);
    unstage(Ys, a.Y, s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // `weights` is freed at scope exit
    return;
  }

  const CacheKey key{a.A.id, int(a.X.dtype), int(sizeof(I)), exec.device.index, s};
  std::shared_ptr<Entry> e = cache().get_or_make(key, [] { return std::make_shared<Entry>(); });
  std::lock_guard<std::mutex> lock(e->mu);
  const bool fresh = e->mat == nullptr;
  void* w = aligned_array(weights_for(a, e->weights, e->weights_ready, s), weight_bytes, weights_copy, exec, s);
  if (fresh)
    TESSERA_CUSPARSE_CHECK(cusparseCreateCsr(&e->mat, a.A.rows, a.A.cols, a.A.nnz, rowptr, col, w, index_type<I>(),
                                             index_type<I>(), CUSPARSE_INDEX_BASE_ZERO, vt));
  else
    TESSERA_CUSPARSE_CHECK(cusparseCsrSetPointers(e->mat, rowptr, col, w));
  auto it = e->alg_by_width.find(a.X.cols);
  if (it == e->alg_by_width.end())
    it = e->alg_by_width.emplace(a.X.cols, pick_algorithm(h, e->mat, B, C, a.X.dtype, e->workspace, s)).first;
  run_spmm(h, e->mat, B, C, a.X.dtype, it->second, &e->workspace, exec);
  unstage(Ys, a.Y, s);
}

void cusparse_cache_clear() { cache().clear(); }
size_t cusparse_cache_size() { return cache().size(); }
void cusparse_cache_set_capacity(size_t entries) { cache().set_capacity(std::max<size_t>(1, entries)); }

template void spmm_cusparse<int32_t>(const SpmmArgs<int32_t>&, const Exec&);
template void spmm_cusparse<int64_t>(const SpmmArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda
