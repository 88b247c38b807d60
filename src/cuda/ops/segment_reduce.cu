// CUDA launchers of the degree-aware segment reduce (device code in segment_reduce_kernels.cuh).
// The light/heavy partition of a graph (and the one-time validation of its offsets and column ids)
// is built on first use and cached per (graph id, device, split), so the hot path is launches only.
#include <algorithm>
#include <list>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "cuda/ops/segment_reduce_kernels.cuh"
#include "ops/segment_reduce/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::ops::detail {
namespace {

using namespace tessera::ops::cuda_sr;

// Device buffer owned by a cache entry (allocated once per graph and split, outside the hot path).
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { allocate(bytes); }
  void allocate(size_t bytes) {
    if (p) cudaFree(p);
    p = nullptr;
    if (bytes) TESSERA_CUDA_CHECK(cudaMalloc(&p, bytes));
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Partition {
  int64_t threshold = 0;          // heavy: degree > threshold
  int64_t light_count = 0, heavy_count = 0, item_count = 0;
  bool all_light = true;          // no split: the light kernel walks node ids directly
  DeviceBuffer light, heavy, items;
};

template <class T>
void upload(DeviceBuffer& dst, const std::vector<T>& src, cudaStream_t s) {
  dst.allocate(src.size() * sizeof(T));
  if (!src.empty())
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(dst.p, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice, s));
}

template <class I>
std::shared_ptr<Partition> build_partition(const CsrView<I>& g, double quantile, int chunk, cudaStream_t s) {
  // Offsets to the host (one copy per graph), validated there; column ids checked on the device.
  std::vector<I> rp(size_t(g.rows) + 1);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(rp.data(), g.rowptr, rp.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
  DeviceBuffer bad(sizeof(unsigned long long));
  TESSERA_CUDA_CHECK(cudaMemsetAsync(bad.p, 0xff, sizeof(unsigned long long), s));
  if (g.nnz > 0) {
    const int blocks = int(std::min<int64_t>((g.nnz + 255) / 256, 4096));
    check_columns_kernel<I><<<blocks, 256, 0, s>>>(g.col, g.nnz, g.cols, static_cast<unsigned long long*>(bad.p));
    TESSERA_CUDA_LAUNCH_CHECK();
  }
  unsigned long long first_bad = 0;
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(&first_bad, bad.p, sizeof(first_bad), cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  TESSERA_CHECK(int64_t(rp[0]) == 0, "segment_reduce: row offsets start at ", int64_t(rp[0]), ", not 0");
  std::vector<int64_t> deg(size_t(g.rows));
  for (int64_t i = 0; i < g.rows; ++i) {
    deg[size_t(i)] = int64_t(rp[i + 1]) - int64_t(rp[i]);
    TESSERA_CHECK(deg[size_t(i)] >= 0, "segment_reduce: non-monotone offsets at row ", i);
  }
  TESSERA_CHECK(int64_t(rp[g.rows]) == g.nnz, "segment_reduce: offsets end at ", int64_t(rp[g.rows]),
                " but nnz is ", g.nnz);
  TESSERA_CHECK(first_bad == ~0ull, "segment_reduce: entry ", int64_t(first_bad) - 1, ": column out of range [0, ",
                g.cols, ")");

  auto p = std::make_shared<Partition>();
  p->threshold = heavy_degree_threshold(deg.data(), g.rows, quantile, chunk);
  std::vector<int64_t> light, heavy;
  std::vector<HeavyItem> items;
  for (int64_t i = 0; i < g.rows; ++i) {
    if (deg[size_t(i)] > p->threshold) {
      const int64_t h = int64_t(heavy.size());
      heavy.push_back(i);
      for (int64_t b = int64_t(rp[i]); b < int64_t(rp[i + 1]); b += chunk)
        items.push_back({h, b, std::min<int64_t>(b + chunk, int64_t(rp[i + 1]))});
    } else {
      light.push_back(i);
    }
  }
  p->all_light = heavy.empty();
  p->light_count = p->all_light ? g.rows : int64_t(light.size());
  p->heavy_count = int64_t(heavy.size());
  p->item_count = int64_t(items.size());
  if (!p->all_light) {
    upload(p->light, light, s);
    upload(p->heavy, heavy, s);
    upload(p->items, items, s);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors die here
  }
  return p;
}

template <class I>
std::shared_ptr<Partition> cached_partition(const CsrView<I>& g, double quantile, int chunk, cudaStream_t s) {
  if (g.id == 0) return build_partition(g, quantile, chunk, s);  // anonymous graph: no cache
  using Key = std::tuple<uint64_t, int, double, int, int>;
  const Key key{g.id, g.device.index, quantile, quantile > 0 ? chunk : 0, int(sizeof(I))};
  static std::mutex mu;
  static std::list<std::pair<Key, std::shared_ptr<Partition>>> lru;  // most recent first, 32 entries
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = lru.begin(); it != lru.end(); ++it)
    if (it->first == key) {
      lru.splice(lru.begin(), lru, it);
      return lru.front().second;
    }
  auto p = build_partition(g, quantile, chunk, s);
  lru.emplace_front(key, p);
  if (lru.size() > 32) lru.pop_back();
  return p;
}

int grid_for(int64_t work, int threads) {
  return int(std::max<int64_t>(1, std::min<int64_t>((work + threads - 1) / threads, 65536)));
}

template <class T, class I, int MODE>
void forward(const SegmentReduceArgs<I>& a, const Exec& exec, const CudaSegmentConfig& cfg) {
  using S = State<T, MODE>;
  using A = typename AccT<T>::type;
  cudaStream_t s = cuda_stream(exec.stream);
  const auto& g = a.A;
  const int64_t F = a.X.cols;
  const auto part = cached_partition(g, cfg.quantile, cfg.chunk, s);
  const T* X = static_cast<const T*>(a.X.data);
  T* Y = static_cast<T*>(a.Y.data);
  int64_t* arg = S::kArg ? a.arg : nullptr;
  const int threads = cfg.warps * kWarp;
  if (part->light_count > 0) {
    const int64_t blocks = (part->light_count + cfg.warps - 1) / cfg.warps;
    light_kernel<T, I, MODE><<<unsigned(blocks), threads, 0, s>>>(
        g.rowptr, g.col, part->all_light ? nullptr : static_cast<const int64_t*>(part->light.p), part->light_count,
        X, a.X.ld, Y, a.Y.ld, arg, F);
    TESSERA_CUDA_LAUNCH_CHECK();
  }
  if (part->heavy_count == 0) return;
  if constexpr (S::kArg && !S::kPacked) {
    fail("segment_reduce: the split variants do not support ", reduce_name(a.reduce), " on float64");
  } else {
    const size_t word = S::kArg ? sizeof(unsigned long long) : sizeof(A);
    Scratch buf(exec, size_t(part->heavy_count) * size_t(F) * word);
    // max starts at 0 (below every packed value), min at all-ones (above), sums at 0.
    TESSERA_CUDA_CHECK(cudaMemsetAsync(buf.get(), MODE == kMin ? 0xff : 0, buf.bytes(), s));
    heavy_kernel<T, I, MODE><<<unsigned(part->item_count), threads, 0, s>>>(
        g.col, static_cast<const HeavyItem*>(part->items.p), X, a.X.ld, buf.get(), F);
    TESSERA_CUDA_LAUNCH_CHECK();
    unpack_kernel<T, I, MODE><<<grid_for(part->heavy_count * F, 256), 256, 0, s>>>(
        g.rowptr, static_cast<const int64_t*>(part->heavy.p), part->heavy_count, buf.get(), Y, a.Y.ld, arg, F);
    TESSERA_CUDA_LAUNCH_CHECK();
  }
}

template <class T> struct DeviceType { using type = T; };
template <> struct DeviceType<half_t> { using type = __half; };
template <> struct DeviceType<bf16_t> { using type = __nv_bfloat16; };

template <class T, class I>
void backward(const SegmentReduceBackwardArgs<I>& a, const Exec& exec) {
  using A = typename AccT<T>::type;
  cudaStream_t s = cuda_stream(exec.stream);
  const auto& g = a.A;
  const int64_t F = a.dY.cols;
  const T* dY = static_cast<const T*>(a.dY.data);
  T* dX = static_cast<T*>(a.dX.data);
  // f32/f64 accumulate in place (after zeroing); f16/bf16 accumulate in a float buffer first.
  constexpr bool in_place = std::is_same_v<T, A>;
  Scratch tmp(exec, in_place ? 0 : size_t(g.cols) * size_t(F) * sizeof(A));
  A* acc = in_place ? reinterpret_cast<A*>(dX) : tmp.as<A>();
  const int64_t ldacc = in_place ? a.dX.ld : F;
  TESSERA_CUDA_CHECK(cudaMemset2DAsync(acc, size_t(ldacc) * sizeof(A), 0, size_t(F) * sizeof(A), size_t(g.cols), s));
  if (has_arg(a.reduce)) {
    scatter_arg_kernel<T, A><<<grid_for(g.rows * F, 256), 256, 0, s>>>(a.arg, dY, a.dY.ld, g.rows, F, acc, ldacc);
  } else {
    const int warps = 8;
    const unsigned blocks = unsigned((g.rows + warps - 1) / warps);
    if (g.rows > 0) {
      if (a.reduce == Reduce::mean)
        scatter_rows_kernel<T, I, A, true><<<blocks, warps * kWarp, 0, s>>>(g.rowptr, g.col, g.rows, dY, a.dY.ld, F, acc, ldacc);
      else
        scatter_rows_kernel<T, I, A, false><<<blocks, warps * kWarp, 0, s>>>(g.rowptr, g.col, g.rows, dY, a.dY.ld, F, acc, ldacc);
    }
  }
  TESSERA_CUDA_LAUNCH_CHECK();
  if constexpr (!in_place) {
    convert_kernel<T, A><<<grid_for(g.cols * F, 256), 256, 0, s>>>(acc, g.cols, F, dX, a.dX.ld);
    TESSERA_CUDA_LAUNCH_CHECK();
  }
}

}  // namespace

template <class I>
void segment_reduce_cuda(const SegmentReduceArgs<I>& a, const Exec& exec, const CudaSegmentConfig& cfg) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, H, [&] {
    using T = typename DeviceType<H>::type;
    switch (a.reduce) {
      case Reduce::sum: return forward<T, I, kSum>(a, exec, cfg);
      case Reduce::mean: return forward<T, I, kMean>(a, exec, cfg);
      case Reduce::max: return forward<T, I, kMax>(a, exec, cfg);
      case Reduce::min: return forward<T, I, kMin>(a, exec, cfg);
    }
  });
}

template <class I>
void segment_reduce_backward_cuda(const SegmentReduceBackwardArgs<I>& a, const Exec& exec) {
  TESSERA_DISPATCH_FLOAT(a.dY.dtype, H, [&] { backward<typename DeviceType<H>::type, I>(a, exec); });
}

template <class I> int64_t max_degree_cuda(const CsrView<I>& g, const Exec& exec) {
  cudaStream_t s = cuda_stream(exec.stream);
  std::vector<I> rp(size_t(g.rows) + 1);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(rp.data(), g.rowptr, rp.size() * sizeof(I), cudaMemcpyDeviceToHost, s));
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
  int64_t m = 0;
  for (int64_t i = 0; i < g.rows; ++i) m = std::max<int64_t>(m, int64_t(rp[i + 1]) - int64_t(rp[i]));
  return m;
}

template int64_t max_degree_cuda<int32_t>(const CsrView<int32_t>&, const Exec&);
template int64_t max_degree_cuda<int64_t>(const CsrView<int64_t>&, const Exec&);
template void segment_reduce_cuda<int32_t>(const SegmentReduceArgs<int32_t>&, const Exec&, const CudaSegmentConfig&);
template void segment_reduce_cuda<int64_t>(const SegmentReduceArgs<int64_t>&, const Exec&, const CudaSegmentConfig&);
template void segment_reduce_backward_cuda<int32_t>(const SegmentReduceBackwardArgs<int32_t>&, const Exec&);
template void segment_reduce_backward_cuda<int64_t>(const SegmentReduceBackwardArgs<int64_t>&, const Exec&);

}  // namespace tessera::ops::detail
