// WSB tensor-core SpMM: launchers and the registry entries "cuda.wsb.f16", "cuda.wsb.bf16" and
// "cuda.wsb.tf32" (device code in spmm_wsb_kernels.cuh, format in include/tessera/format/wsb.hpp).
//
// The format is built once per graph id on the host and cached on the device (wsb_device.cu).
// Weights from A.values (part of the graph's identity, see Csr::touch) or ones live in cached
// tiles. Separate per-call `values` (what the torch layer passes) may change between calls under
// the same graph id, so their tiles are re-derived on every call into scratch memory: zero, then
// one thread per occupied cell sums its entries (wsb_refill_kernel). Scratch rather than a cached
// buffer keeps concurrent calls on different streams independent.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "cuda/format/wsb_device.hpp"
#include "cuda/ops/spmm_wsb_kernels.cuh"
#include "ops/spmm/variants.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::cuda {

namespace {

// Smallest width worth a tensor-core pass: below one 16-feature n-tile pair the CSR kernels win.
constexpr int64_t kWsbMinWidth = 16;

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <class I>
bool wsb_eligible(const ops::SpmmArgs<I>& a, DType dtype) {
  return a.X.dtype == dtype && a.Y.dtype == dtype && a.A.id != 0 &&
         a.X.cols >= kWsbMinWidth && a.A.device.is_cuda() && a.X.device.is_cuda() && a.Y.device.is_cuda();
}

template <class I, class T, class Out>
wsb::Params<I, T, Out> params(const ops::SpmmArgs<I>& a, const WsbDevice& d, const void* tiles) {
  wsb::Params<I, T, Out> p;
  p.rows = d.rows;
  p.windows = d.windows;
  p.F = a.X.cols;
  p.window_ptr = d.window_ptr;
  p.block_cols = static_cast<const I*>(d.block_cols);
  p.tiles = static_cast<const T*>(tiles);
  p.X = static_cast<const T*>(a.X.data);
  p.ldx = a.X.ld;
  p.Y = static_cast<Out*>(a.Y.data);
  p.ldy = a.Y.ld;
  return p;
}

// 16-byte cp.async gathers need every X row to start on a 16-byte boundary.
template <class T>
bool rows_16b(const DenseView& X) {
  constexpr int64_t e = 16 / sizeof(T);
  return X.cols % e == 0 && X.ld % e == 0 && aligned(X.data, 16);
}
// Paired (32-bit / 64-bit) stores of two neighbouring features.
template <class Out>
bool pair_stores(const DenseView& Y) {
  return Y.ld % 2 == 0 && aligned(Y.data, 2 * sizeof(Out));
}

dim3 grid_of(const WsbDevice& d, int64_t F) {
  const int64_t gx = (d.windows + wsb::kWarps - 1) / wsb::kWarps;
  const int64_t gy = (F + wsb::kSlab - 1) / wsb::kSlab;
  TESSERA_CHECK(gy <= 65535, "wsb spmm: feature width ", F, " needs ", gy, " slabs (limit 65535)");
  TESSERA_CHECK(gx <= INT32_MAX, "wsb spmm: ", d.windows, " windows exceed the grid limit");
  return dim3(unsigned(gx), unsigned(gy), 1);
}

template <class I, class T>
void launch_k16(const ops::SpmmArgs<I>& a, const WsbDevice& d, const void* tiles, cudaStream_t s) {
  const auto p = params<I, T, T>(a, d, tiles);
  const dim3 grid = grid_of(d, a.X.cols);
  const bool pairs = pair_stores<T>(a.Y);
  if (rows_16b<T>(a.X))
    wsb::spmm_wsb_k16_kernel<I, T, true><<<grid, wsb::kWarps * 32, 0, s>>>(p, pairs);
  else
    wsb::spmm_wsb_k16_kernel<I, T, false><<<grid, wsb::kWarps * 32, 0, s>>>(p, pairs);
  TESSERA_CUDA_LAUNCH_CHECK();
}

template <class I>
void launch_tf32(const ops::SpmmArgs<I>& a, const WsbDevice& d, const void* tiles, cudaStream_t s) {
  const auto p = params<I, float, float>(a, d, tiles);
  const dim3 grid = grid_of(d, a.X.cols);
  const bool pairs = pair_stores<float>(a.Y);
  if (rows_16b<float>(a.X))
    wsb::spmm_wsb_tf32_kernel<I, true><<<grid, wsb::kWarps * 32, 0, s>>>(p, pairs);
  else
    wsb::spmm_wsb_tf32_kernel<I, false><<<grid, wsb::kWarps * 32, 0, s>>>(p, pairs);
  TESSERA_CUDA_LAUNCH_CHECK();
}

// Tiles of the per-call weights into `out` (blocks * 128 of T), on stream s.
template <class T>
void refill(const WsbDevice& d, const float* values, void* out, cudaStream_t s) {
  const size_t bytes = size_t(d.blocks) * 128 * sizeof(T);
  if (!bytes) return;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(out, 0, bytes, s));  // all-zero bits = +0 in every tile type
  if (!d.runs) return;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((d.runs + threads - 1) / threads, int64_t(1) << 20);
  wsb::wsb_refill_kernel<T><<<unsigned(blocks), threads, 0, s>>>(d.run_cell, d.run_ptr, d.run_entry, d.runs,
                                                               values, static_cast<T*>(out));
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace

// Y = A X on tensor cores with operands of `dtype` (f16, bf16; f32 runs as tf32).
template <class I>
void spmm_wsb(const ops::SpmmArgs<I>& a, const Exec& exec, DType dtype) {
  const char* name = dtype == DType::f16 ? "cuda.wsb.f16" : dtype == DType::bf16 ? "cuda.wsb.bf16" : "cuda.wsb.tf32";
  TESSERA_CHECK(a.X.dtype == dtype && a.Y.dtype == dtype, name, ": X and Y must be ", dtype_name(dtype),
                " (got ", dtype_name(a.X.dtype), " and ", dtype_name(a.Y.dtype), ")");
  TESSERA_CHECK(a.A.device.is_cuda() && a.X.device.is_cuda() && a.Y.device.is_cuda(), name,
                ": A, X and Y must be on a CUDA device");
  TESSERA_CHECK(a.X.rows == a.A.cols && a.Y.rows == a.A.rows && a.X.cols == a.Y.cols, name,
                ": shapes do not match (A ", a.A.rows, " x ", a.A.cols, ", X ", a.X.rows, " x ", a.X.cols,
                ", Y ", a.Y.rows, " x ", a.Y.cols, ")");
  if (a.A.rows == 0 || a.X.cols == 0) return;
  const bool per_call = a.values != nullptr;
  const auto d = wsb_device(a.A, dtype, exec, nullptr, per_call);
  const cudaStream_t s = cuda_stream(exec.stream);
  // Per-call weights: scratch tiles, released (stream-ordered) when this call returns.
  Scratch scratch(exec, per_call ? size_t(d->blocks) * 128 * dtype_size(dtype) : 0);
  const void* tiles = d->tiles;
  if (per_call) {
    const auto* w = static_cast<const float*>(a.values);
    switch (dtype) {
      case DType::f16: refill<__half>(*d, w, scratch.get(), s); break;
      case DType::bf16: refill<__nv_bfloat16>(*d, w, scratch.get(), s); break;
      default: refill<float>(*d, w, scratch.get(), s); break;
    }
    tiles = scratch.get();
  }
  switch (dtype) {
    case DType::f16: launch_k16<I, __half>(a, *d, tiles, s); break;
    case DType::bf16: launch_k16<I, __nv_bfloat16>(a, *d, tiles, s); break;
    case DType::f32: launch_tf32<I>(a, *d, tiles, s); break;
    default: fail(name, ": unsupported dtype ", dtype_name(dtype));
  }
}

template void spmm_wsb<int32_t>(const ops::SpmmArgs<int32_t>&, const Exec&, DType);
template void spmm_wsb<int64_t>(const ops::SpmmArgs<int64_t>&, const Exec&, DType);

}  // namespace tessera::cuda

namespace tessera::ops {

template <class I>
void register_spmm_wsb_variants(tune::Registry<SpmmArgs<I>>& reg) {
  using A = SpmmArgs<I>;
  struct Entry {
    const char* name;
    DType dtype;
    const char* note;
  };
  const Entry entries[] = {
      {"cuda.wsb.f16", DType::f16, "tensor cores: WSB 16x8 blocks, fp16 mma.m16n8k16, fp32 accumulate"},
      {"cuda.wsb.bf16", DType::bf16, "tensor cores: WSB 16x8 blocks, bf16 mma.m16n8k16, fp32 accumulate"},
      {"cuda.wsb.tf32", DType::f32, "tensor cores: WSB 16x8 blocks, tf32 mma.m16n8k8 on fp32 input"},
  };
  for (const Entry& e : entries) {
    const DType dt = e.dtype;
    reg.add({e.name, tune::Backend::cuda, [dt](const A& a) { return ::tessera::cuda::wsb_eligible(a, dt); },
             [dt](const A& a, const Exec& ex) {
               ::tessera::cuda::spmm_wsb(a, ex, dt);
               cuda::add_row_bias(a.Y, a.bias, ex);  // the MMA epilogue writes raw tiles: bias after
             },
             e.note});
  }
}

template void register_spmm_wsb_variants<int32_t>(tune::Registry<SpmmArgs<int32_t>>&);
template void register_spmm_wsb_variants<int64_t>(tune::Registry<SpmmArgs<int64_t>>&);

}  // namespace tessera::ops
