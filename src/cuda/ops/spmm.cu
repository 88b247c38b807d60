// Launchers of the custom CSR SpMM / SDDMM kernels (device code in spmm_kernels.cuh). Every launch
// runs on the caller's stream and is checked.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "cuda/ops/spmm_kernels.cuh"
#include "ops/spmm/alignment.hpp"
#include "ops/spmm/variants.hpp"
#include "tessera/core/cuda_check.hpp"
#include "tessera/core/lru_cache.hpp"

namespace tessera::ops::cuda {

namespace {
constexpr int kBlock = 256;

// Runs fn with T bound to the device element type of dtype.
template <class Fn>
void dispatch_device_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::f16: return fn(__half{});
    case DType::bf16: return fn(__nv_bfloat16{});
  }
  fail("spmm (cuda): unsupported dtype");
}

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Rows with more than long_row = max(floor, kLongOverMean x mean degree) edges leave the row
// pass (a group of G lanes would walk them alone: with kIlp = 4, about 32 dependent latencies is
// the most a short-graph row-pass row costs). The floor is kLongRow, or kSmallLongRow on graphs of
// at most kSmallGraphRows rows: their row pass is a few waves, so its longest row is its time
// (Cora, H200: the row kernel took 11.7 us, most of the SpMM, with rows up to 128 edges in it).
// Relative to the mean because a row is a straggler
// only against its neighbours in the launch: on a dense graph whose rows all hold ~150-200 edges
// (the clustered benchmark graph) a fixed 128 sent every row to the chunk path, whose zeroed
// partial buffer, atomics and finalize pass made the SpMM 1.6x slower than the row pass. Long
// rows are handled one of two ways, per graph:
//  * block rows: when at most kMaxBlockRows rows have long_row..kBlockRow edges (small graphs,
//    where one extra launch is all the time there is), each gets a whole block, dispatched
//    ahead of the row pass in the same launch (csr_block_rows_kernel; two launches where that
//    would cost the row pass registers, see one_launch_keeps_registers): no atomics, no zeroed
//    buffer, no finalize pass.
//  * chunks: otherwise (and for hubs above kBlockRow), rows are split into chunks of kChunk
//    edges, packed G lanes per chunk and reduced into a partial buffer with atomics (see
//    RowsParams). On R-MAT 2^17 (thousands of such rows) a block per row left most of each
//    block idle and ran 1.4x slower than the packed chunks; on Cora the chunk path's three extra
//    operations cost 3x the row pass itself.
constexpr int64_t kLongRow = 128;
constexpr int64_t kSmallLongRow = 32;
constexpr int64_t kSmallGraphRows = 65536;
constexpr int64_t kLongOverMean = 4;
constexpr int64_t kBlockRow = 2048;
constexpr int64_t kMaxBlockRows = 1024;  // about one wave of resident blocks on an H200
constexpr int64_t kChunk = 128;

// Per-graph plan of the long-row handling, built once from a host copy of rowptr and cached by
// graph id (bounded, thread-safe). Device layout: n_block block-row ids, n_long chunked row ids,
// then n_chunks (index into the chunked rows, begin, end) triples.
struct LongRowPlan {
  int64_t long_row = kLongRow, max_row = 0, n_block = 0, n_long = 0, n_chunks = 0;
  void* device = nullptr;
  ~LongRowPlan() {
    if (device) cudaFree(device);
  }
  const int64_t* block_rows() const { return static_cast<const int64_t*>(device); }
  const int64_t* long_rows() const { return block_rows() + n_block; }
  const int64_t* chunks() const { return long_rows() + n_long; }
};

template <class I>
std::shared_ptr<LongRowPlan> build_plan(const CsrView<I>& g, const Exec& exec, bool upload) {
  auto plan = std::make_shared<LongRowPlan>();
  if (g.rows == 0) return plan;
  std::vector<I> rp(size_t(g.rows) + 1);
  cudaStream_t s = cuda_stream(exec.stream);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(rp.data(), g.rowptr, rp.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  const int64_t nnz = int64_t(rp.back()) - int64_t(rp.front());
  const int64_t min_long = g.rows <= kSmallGraphRows ? kSmallLongRow : kLongRow;
  const int64_t long_row = std::max(min_long, kLongOverMean * ((nnz + g.rows - 1) / g.rows));
  plan->long_row = long_row;
  int64_t medium = 0;
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t d = int64_t(rp[size_t(i) + 1]) - int64_t(rp[size_t(i)]);
    medium += d > long_row && d <= kBlockRow ? 1 : 0;
  }
  const bool block_rows = medium <= kMaxBlockRows;
  std::vector<int64_t> block, rows, chunks;
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t b = int64_t(rp[size_t(i)]), e = int64_t(rp[size_t(i) + 1]);
    plan->max_row = std::max(plan->max_row, e - b);
    if (e - b <= long_row) continue;
    if (block_rows && e - b <= kBlockRow) {
      block.push_back(i);
      continue;
    }
    for (int64_t c = b; c < e; c += kChunk) chunks.insert(chunks.end(), {int64_t(rows.size()), c, std::min(e, c + kChunk)});
    rows.push_back(i);
  }
  plan->n_block = int64_t(block.size());
  plan->n_long = int64_t(rows.size());
  plan->n_chunks = int64_t(chunks.size() / 3);
  if (upload && (plan->n_block || plan->n_long)) {
    block.insert(block.end(), rows.begin(), rows.end());
    block.insert(block.end(), chunks.begin(), chunks.end());
    TESSERA_CUDA_CHECK(cudaMalloc(&plan->device, block.size() * sizeof(int64_t)));
    TESSERA_CUDA_CHECK(cudaMemcpy(plan->device, block.data(), block.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  }
  return plan;
}

using PlanCache = LruCache<std::pair<uint64_t, int>, LongRowPlan>;  // by (graph id, device), 64 plans
PlanCache& plan_cache() {
  static PlanCache* c = new PlanCache(64);  // leaked: plans may hold device memory past CUDA teardown
  return *c;
}

// The plan of a graph with an identity (nullptr for anonymous graphs: no split, no caching).
template <class I>
std::shared_ptr<LongRowPlan> long_row_plan(const CsrView<I>& g, const Exec& exec) {
  if (g.id == 0) return nullptr;
  const std::pair<uint64_t, int> key(g.id, g.device.index);
  if (auto plan = plan_cache().find(key)) return plan;
  auto plan = build_plan(g, exec, true);  // outside the lock: a D2H copy and a scan
  plan_cache().put(key, plan);
  return plan;
}

// Whether the medium rows and the row pass share one launch (csr_block_rows_kernel) for this
// instantiation. ptxas allocates the combined kernel's registers for its block-row path too; where
// that left the row pass fewer registers than csr_rows_kernel has alone it spilled, and the row
// pass got slower than the launch it saved (fp32 at four vectors per lane: 64 registers against
// 76, Cora width 512 5% slower on the H200, h200_20261202f). Read once from the compiled kernels.
template <class T, class I, int V, int NV, int G>
bool one_launch_keeps_registers() {
  static const bool keeps = [] {
    cudaFuncAttributes rows{}, both{};
    TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&rows, kernels::csr_rows_kernel<T, I, V, NV, G, false>));
    TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&both, kernels::csr_block_rows_kernel<T, I, V, NV, G>));
    return both.numRegs >= rows.numRegs;
  }();
  return keeps;
}

template <class T, class I, int V, int NV, int G>
void launch(const SpmmArgs<I>& a, const Exec& exec) {
  using W = kernels::Acc<T>;
  const auto plan = long_row_plan(a.A, exec);
  const bool split = plan && (plan->n_block > 0 || plan->n_long > 0);
  kernels::RowsParams<T, I> p{a.A.rows, a.X.cols, a.A.rowptr, a.A.col, static_cast<const W*>(a.values), a.A.values,
                              static_cast<const T*>(a.X.data), a.X.ld, static_cast<T*>(a.Y.data), a.Y.ld,
                              split ? plan->long_row : INT64_MAX, nullptr, 0, nullptr,
                              static_cast<const W*>(a.bias)};
  const cudaStream_t s = cuda_stream(exec.stream);
  const int64_t blocks = (a.A.rows * G + kBlock - 1) / kBlock;
  const int64_t n_block = split ? plan->n_block : 0;  // medium rows, ahead of the row pass
  TESSERA_CHECK(blocks + n_block <= INT32_MAX, "spmm (cuda): too many rows (", a.A.rows, ")");
  if (blocks == 0) return;
  if (n_block && one_launch_keeps_registers<T, I, V, NV, G>()) {
    kernels::csr_block_rows_kernel<T, I, V, NV, G><<<unsigned(n_block + blocks), kBlock, 0, s>>>(p, plan->block_rows(),
                                                                                                n_block);
  } else {
    kernels::csr_rows_kernel<T, I, V, NV, G, false><<<unsigned(blocks), kBlock, 0, s>>>(p);
    TESSERA_CUDA_LAUNCH_CHECK();
    if (n_block)
      kernels::csr_block_rows_kernel<T, I, V, NV, G><<<unsigned(n_block), kBlock, 0, s>>>(p, plan->block_rows(), n_block);
  }
  TESSERA_CUDA_LAUNCH_CHECK();
  if (!split || !plan->n_long) return;
  const size_t partial_bytes = size_t(plan->n_long) * size_t(a.X.cols) * sizeof(W);
  Scratch partial(exec, partial_bytes);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(partial.get(), 0, partial_bytes, s));
  p.chunks = plan->chunks();
  p.n_chunks = plan->n_chunks;
  p.partial = partial.as<W>();
  const int64_t chunk_blocks = (plan->n_chunks * G + kBlock - 1) / kBlock;
  kernels::csr_rows_kernel<T, I, V, NV, G, true><<<unsigned(chunk_blocks), kBlock, 0, s>>>(p);
  TESSERA_CUDA_LAUNCH_CHECK();
  const int64_t total = plan->n_long * a.X.cols;
  const unsigned fin_blocks = unsigned(std::min<int64_t>((total + kBlock - 1) / kBlock, 65535));
  kernels::finalize_long_rows_kernel<T><<<fin_blocks, kBlock, 0, s>>>(plan->long_rows(), plan->n_long, a.X.cols,
                                                                        partial.as<W>(), p.bias, p.Y, a.Y.ld);
  TESSERA_CUDA_LAUNCH_CHECK();
}

// Picks NV (vectors per lane) in {1, 2, 4} for a tile of G lanes over `vectors` vectors.
template <class T, class I, int V, int G>
void launch_nv(const SpmmArgs<I>& a, const Exec& exec, int64_t vectors) {
  const int64_t per_lane = (vectors + G - 1) / G;
  if (per_lane <= 1) return launch<T, I, V, 1, G>(a, exec);
  if (per_lane <= 2) return launch<T, I, V, 2, G>(a, exec);
  return launch<T, I, V, 4, G>(a, exec);  // wider rows loop over feature tiles
}

template <class T, class I>
void warp_row_typed(const SpmmArgs<I>& a, const Exec& exec) {
  constexpr int V = kernels::kVec16<T>;
  const int64_t F = a.X.cols;
  // 16-byte loads/stores need every row start of X and Y on a 16-byte boundary (actual pointers
  // and leading dimensions, see ops/spmm/alignment.hpp); anything else takes scalar accesses.
  static_assert(V * sizeof(T) == 16);
  const bool vec = vector_path_eligible(a.X, a.Y, 16);
  if (!vec) return launch_nv<T, I, 1, 32>(a, exec, F);  // generic: scalar loads, a warp per row
  const int64_t vectors = F / V;
  const int64_t g = std::clamp<int64_t>(next_pow2(vectors), 8, 32);
  if (g == 8) return launch_nv<T, I, V, 8>(a, exec, vectors);
  if (g == 16) return launch_nv<T, I, V, 16>(a, exec, vectors);
  return launch_nv<T, I, V, 32>(a, exec, vectors);
}

template <class T, class I>
void feature_parallel_typed(const SpmmArgs<I>& a, const Exec& exec) {
  const int64_t F = a.X.cols;
  TESSERA_CHECK(F <= kFeatureParallelMaxWidth, "spmm: cuda.csr.feature_parallel needs width <= ",
                kFeatureParallelMaxWidth, ", got ", F);
  switch (next_pow2(F)) {
    case 1: return launch<T, I, 1, 1, 1>(a, exec);
    case 2: return launch<T, I, 1, 1, 2>(a, exec);
    case 4: return launch<T, I, 1, 1, 4>(a, exec);
    case 8: return launch<T, I, 1, 1, 8>(a, exec);
    case 16: return launch<T, I, 1, 1, 16>(a, exec);
    default: return launch<T, I, 1, 1, 32>(a, exec);
  }
}

template <class T, class I>
void sddmm_typed(const SddmmArgs<I>& a, const Exec& exec) {
  using W = kernels::Acc<T>;
  constexpr int V = kernels::kVec16<T>;
  const int64_t F = a.X.cols;
  const int64_t warps = (a.A.nnz + kernels::kEdgesPerWarp - 1) / kernels::kEdgesPerWarp;
  const int64_t blocks = (warps * 32 + kBlock - 1) / kBlock;
  TESSERA_CHECK(blocks <= INT32_MAX, "sddmm (cuda): too many edges (", a.A.nnz, ")");
  if (blocks == 0) return;
  static_assert(V * sizeof(T) == 16);
  const bool vec = vector_path_eligible(a.X, a.dY, 16);  // see warp_row_typed
  TESSERA_CHECK(reinterpret_cast<uintptr_t>(a.dw) % sizeof(W) == 0, "sddmm (cuda): dw is not aligned to ",
                sizeof(W), " bytes");
  auto* dw = static_cast<W*>(a.dw);
  const auto* dY = static_cast<const T*>(a.dY.data);
  const auto* X = static_cast<const T*>(a.X.data);
  if (vec)
    kernels::sddmm_edges_kernel<T, I, V><<<unsigned(blocks), kBlock, 0, cuda_stream(exec.stream)>>>(
        a.A.rows, a.A.nnz, F, a.A.rowptr, a.A.col, dY, a.dY.ld, X, a.X.ld, dw);
  else
    kernels::sddmm_edges_kernel<T, I, 1><<<unsigned(blocks), kBlock, 0, cuda_stream(exec.stream)>>>(
        a.A.rows, a.A.nnz, F, a.A.rowptr, a.A.col, dY, a.dY.ld, X, a.X.ld, dw);
  TESSERA_CUDA_LAUNCH_CHECK();
}
}  // namespace

template <class I>
void spmm_warp_row(const SpmmArgs<I>& a, const Exec& exec) {
  dispatch_device_type(a.X.dtype, [&](auto t) { warp_row_typed<decltype(t), I>(a, exec); });
}
template <class I>
void spmm_feature_parallel(const SpmmArgs<I>& a, const Exec& exec) {
  dispatch_device_type(a.X.dtype, [&](auto t) { feature_parallel_typed<decltype(t), I>(a, exec); });
}
template <class I>
void sddmm(const SddmmArgs<I>& a, const Exec& exec) {
  dispatch_device_type(a.X.dtype, [&](auto t) { sddmm_typed<decltype(t), I>(a, exec); });
}

void add_row_bias(const DenseView& Y, const void* bias, const Exec& exec) {
  if (!bias || Y.rows == 0 || Y.cols == 0) return;
  dispatch_device_type(Y.dtype, [&](auto t) {
    using T = decltype(t);
    const int64_t total = Y.rows * Y.cols;
    const unsigned blocks = unsigned(std::min<int64_t>((total + kBlock - 1) / kBlock, 65535));
    kernels::add_row_bias_kernel<T><<<blocks, kBlock, 0, cuda_stream(exec.stream)>>>(
        static_cast<T*>(Y.data), Y.rows, Y.cols, Y.ld, static_cast<const kernels::Acc<T>*>(bias));
    TESSERA_CUDA_LAUNCH_CHECK();
  });
}

void row_plan_cache_clear() { plan_cache().clear(); }

template <class I>
int64_t max_row_length(const CsrView<I>& g, const Exec& exec) {
  const auto plan = g.id ? long_row_plan(g, exec) : build_plan(g, exec, false);
  return plan ? plan->max_row : 0;
}

template void spmm_warp_row<int32_t>(const SpmmArgs<int32_t>&, const Exec&);
template void spmm_warp_row<int64_t>(const SpmmArgs<int64_t>&, const Exec&);
template void spmm_feature_parallel<int32_t>(const SpmmArgs<int32_t>&, const Exec&);
template void spmm_feature_parallel<int64_t>(const SpmmArgs<int64_t>&, const Exec&);
template void sddmm<int32_t>(const SddmmArgs<int32_t>&, const Exec&);
template void sddmm<int64_t>(const SddmmArgs<int64_t>&, const Exec&);
template int64_t max_row_length<int32_t>(const CsrView<int32_t>&, const Exec&);
template int64_t max_row_length<int64_t>(const CsrView<int64_t>&, const Exec&);

}  // namespace tessera::ops::cuda
