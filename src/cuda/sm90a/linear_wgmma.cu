// The fp32 projection Y = X W^T (+ b) (+ R) as three tf32 products on Hopper's warpgroup tensor-core
// instruction (wgmma), the LinearArgs contract of tessera/ops/linear.hpp. Compiled for sm_90a only
// (src/CMakeLists.txt): wgmma exists on compute capability 9.0 alone, so the variant is eligible
// there alone (linear_wgmma_eligible).
//
// Why: the mma.sync kernel (cuda/ops/linear_kernels.cuh) runs at 47-57 TFLOP/s on the H200, a third
// of the tensor cores' tf32 rate over three products, and the layers' projections and input
// gradients are 35-57% of a GATv2 or Graph Transformer training step on PubMed. wgmma issues a
// 64 x 128 x 8 product per warpgroup from shared memory.
// Measured (bench/results/h200_20261203e): 61-68 TFLOP/s where K is long and the grid many waves,
// 8-15% better than mma.sync there, and 5-30% worse at K = 128 or on short grids: it was predicted
// near 2x. A likely limit is shared-memory bandwidth: three SS products re-read each operand tile,
// ~96 bytes a clock at the full rate, plus the split's own reads and writes, against 128 bytes a
// clock per multiprocessor. So the heuristic takes it only where it measured faster
// (linear_wgmma_preferred).
//
// Scheme (the error analysis of linear_kernels.cuh holds unchanged): per K step of 32, cp.async
// copies the X and W tiles 16 bytes at a time into raw slots, 3 steps in flight. Once a step has
// landed, every thread splits its chunks, x = hi + lo (split_tf32): hi is written back in place and lo
// into a lo tile. The three products lo*hi + hi*lo + hi*hi are then 12 wgmmas per warpgroup (4 k-slices
// of 8), and all their operands are shared-memory descriptors. Step k+1 is split while the tensor
// cores work on step k (two lo buffers).
//
// Shared layout: wgmma's K-major tiles in 128-byte swizzle mode, [rows][32 floats] on 1024-byte
// boundaries, chunk c of row r at chunk position c ^ (r % 8); the descriptor of k-slice s starts
// 32 s bytes into the tile (wgmma_layout.hpp, checked on the CPU by the linear conformance test).
//
// Each of the two warpgroups owns 64 rows of the 128 x 128 CTA tile and all its columns. Its
// accumulator layout is mma.m16n8's per warp (warp w: rows 16 w + g and 16 w + g + 8; n8 block j:
// columns 8 j + 2t and 8 j + 2t + 1), so the epilogue is the mma.sync kernel's.
//
// WT (LinearArgs::w_transposed, W stored K x N): W's raw slot is its rows as they lie,
// [32][BN + 4], as in the mma.sync kernel. The split gathers each chunk (n, k .. k+3) down column n
// into separate K-major hi and lo tiles, so the products are the same as for an N x K W.
#include <cstdint>

#include "cuda/ops/linear_launch.cuh"  // Params, split_tf32, smem_u32, the launch helpers
#include "cuda/sm90a/wgmma_layout.hpp"     // chunk_at, tile_desc
#include "ops/linear/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::cuda::linear_wgmma {
namespace {

using tessera::cuda::linear::Params;
using tessera::cuda::linear::kBK;  // floats of K per step: one 128-byte swizzled row
using tessera::cuda::linear::smem_u32;
// The CTA tile: two warpgroups of 64 rows, 128 columns (the wgmma n), 3 raw stages in flight; one
// CTA a multiprocessor (160-194 KB of shared memory). The H200 measurements that chose it, against
// 64x128, 128x64 and 64x64 tiles, are in bench/results/h200_20261203e.
constexpr int kWarpgroups = 2, BM = 64 * kWarpgroups, BN = 128, kStages = 3, kThreads = 128 * kWarpgroups;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TESSERA_HAVE_WGMMA_CODE 1
#endif

#ifdef TESSERA_HAVE_WGMMA_CODE
// The wgmma instructions, spelled out: inline asm names every accumulator register.
// d += A B^T for a 64 x 128 tile of D (k = 8): A and B tf32, K-major in shared memory (descriptors).
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// Makes this thread's shared-memory stores visible to the async proxy (the wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving accumulator reads or writes across the asynchronous wgmmas.
template <int R>
__device__ __forceinline__ void pin(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
#endif

using wgmma_layout::chunk_at;
using wgmma_layout::tile_desc;

__device__ __forceinline__ void store_split(float* hi, float* lo, int off, float4 v) {
  uint4 h, l;
  tessera::cuda::split_tf32(v.x, h.x, l.x);
  tessera::cuda::split_tf32(v.y, h.y, l.y);
  tessera::cuda::split_tf32(v.z, h.z, l.z);
  tessera::cuda::split_tf32(v.w, h.w, l.w);
  *reinterpret_cast<uint4*>(hi + off) = h;
  *reinterpret_cast<uint4*>(lo + off) = l;
}

// Shared layout, in floats, every wgmma tile 1024-byte aligned (BM, BN multiples of 64 rows):
//   raw A, S slots                 [BM][32] swizzled: cp.async lands here; the split turns it
//                                  into A hi in place
//   raw B, S slots (not WT)        [BN][32] swizzled, likewise B hi
//   lo A, lo B, 2 buffers          the low parts of the step being multiplied and of the next
//   hi B, 2 buffers (WT)           B hi (its raw stage is not K-major)
//   raw B, S slots (WT)            [32][BN + 4], rows of W as they lie (not read by wgmma: last)
template <bool WT>
struct Layout {
  static constexpr int S = kStages, kA = BM * kBK, kB = BN * kBK;
  static constexpr int kRawBt = kBK * (BN + tessera::cuda::linear::kPadWT);
  static constexpr int raw_a(int s) { return s * kA; }
  static constexpr int raw_b(int s) { return S * kA + s * kB; }
  static constexpr int lo_a(int b) { return S * (kA + (WT ? 0 : kB)) + b * (kA + kB); }
  static constexpr int lo_b(int b) { return lo_a(b) + kA; }
  static constexpr int hi_b(int b) { return lo_a(2) + b * kB; }  // WT only
  static constexpr int raw_bt(int s) { return lo_a(2) + 2 * kB + s * kRawBt; }
  static constexpr int floats() { return WT ? raw_bt(S) : lo_a(2); }
};

template <bool RES, bool WT>
__global__ void __launch_bounds__(kThreads) linear_wgmma_kernel(const Params p) {
#ifdef TESSERA_HAVE_WGMMA_CODE
  using L = Layout<WT>;
  constexpr int S = L::S, R = BN / 2;
  constexpr int kAChunks = BM * 8 / kThreads, kBChunks = BN * 8 / kThreads;  // 16-byte chunks a thread splits
  extern __shared__ float smem_raw[];
  float* sm = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));

  const tessera::cuda::linear::TileOrigin<BM, BN, WT> o(p, blockIdx.x);
  const int64_t m0 = o.m0, rows_x = o.rows_x;
  const int n0 = o.n0, rows_w = o.rows_w, k_steps = o.k_steps;
  const float* gx = o.gx;
  const float* gw = o.gw;
  const int tid = threadIdx.x;

  // cp.async of step ks into slot ks % S (an empty commit group past the last step keeps the
  // group count, which cp_async_wait relies on).
  auto fetch = [&](int ks) {
    if (ks < k_steps) {
      const int slot = ks % S, k0 = ks * kBK;
#pragma unroll
      for (int j = 0; j < kAChunks; ++j) {
        const int q = tid + kThreads * j, row = q >> 3, c = q & 7, col = k0 + 4 * c;
        const bool ok = row < rows_x && col < p.k;
        tessera::cuda::linear::cp_async16(smem_u32(sm + L::raw_a(slot) + chunk_at(row, c)),
                                          ok ? gx + row * p.ldx + col : gx, ok);
      }
      if constexpr (WT) {
        tessera::cuda::linear::load_tile_kn<BN, kThreads>(sm + L::raw_bt(slot), gw, p.ldw, p.k, rows_w, k0);
      } else {
#pragma unroll
        for (int j = 0; j < kBChunks; ++j) {
          const int q = tid + kThreads * j, row = q >> 3, c = q & 7, col = k0 + 4 * c;
          const bool ok = row < rows_w && col < p.k;
          tessera::cuda::linear::cp_async16(smem_u32(sm + L::raw_b(slot) + chunk_at(row, c)),
                                            ok ? gw + int64_t(row) * p.ldw + col : gw, ok);
        }
      }
    }
    tessera::cuda::linear::cp_async_commit();
  };
  // Splits step ks's landed tiles: hi in place (or into hi B for WT), lo into buffer ks & 1.
  auto split = [&](int ks) {
    const int slot = ks % S, b = ks & 1;
#pragma unroll
    for (int j = 0; j < kAChunks; ++j) {
      const int q = tid + kThreads * j, off = chunk_at(q >> 3, q & 7);
      float* raw = sm + L::raw_a(slot);
      store_split(raw, sm + L::lo_a(b), off, *reinterpret_cast<const float4*>(raw + off));
    }
#pragma unroll
    for (int j = 0; j < kBChunks; ++j) {
      const int q = tid + kThreads * j;
      if constexpr (WT) {  // chunk (n, k .. k+3) gathered down column n of the [32][BN + 4] stage
        const int n = q % BN, c = q / BN;
        const float* raw = sm + L::raw_bt(slot) + 4 * c * (BN + tessera::cuda::linear::kPadWT) + n;
        constexpr int ld = BN + tessera::cuda::linear::kPadWT;
        store_split(sm + L::hi_b(b), sm + L::lo_b(b), chunk_at(n, c),
                    make_float4(raw[0], raw[ld], raw[2 * ld], raw[3 * ld]));
      } else {
        const int off = chunk_at(q >> 3, q & 7);
        float* raw = sm + L::raw_b(slot);
        store_split(raw, sm + L::lo_b(b), off, *reinterpret_cast<const float4*>(raw + off));
      }
    }
    fence_proxy_async();
  };

  float acc[R];
#pragma unroll
  for (int i = 0; i < R; ++i) acc[i] = 0.f;

  const int wg = tid >> 7;
#pragma unroll
  for (int s = 0; s < S - 1; ++s) fetch(s);
  tessera::cuda::linear::cp_async_wait<S - 2>();  // step 0 landed (this thread's part)
  __syncthreads();
  split(0);
  __syncthreads();
  for (int ks = 0; ks < k_steps; ++ks) {
    const int slot = ks % S, b = ks & 1;
    const uint64_t ah = tile_desc(smem_u32(sm + L::raw_a(slot) + wg * 64 * kBK));
    const uint64_t al = tile_desc(smem_u32(sm + L::lo_a(b) + wg * 64 * kBK));
    const uint64_t bh = tile_desc(smem_u32(sm + (WT ? L::hi_b(b) : L::raw_b(slot))));
    const uint64_t bl = tile_desc(smem_u32(sm + L::lo_b(b)));
    pin(acc);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < kBK / 8; ++s) {  // k-slice s: +32 s bytes = +2 s in the start field
      wgmma_m64n128k8_tf32(acc, al + 2 * s, bh + 2 * s);  // small terms first
      wgmma_m64n128k8_tf32(acc, ah + 2 * s, bl + 2 * s);
      wgmma_m64n128k8_tf32(acc, ah + 2 * s, bh + 2 * s);
    }
    wgmma_commit();
    pin(acc);
    // While the tensor cores work: refill the slot step ks - 1 used (its products finished before
    // the last barrier), then split step ks + 1 into the other lo (and hi B) buffer.
    fetch(ks + S - 1);
    if (ks + 1 < k_steps) {
      tessera::cuda::linear::cp_async_wait<S - 2>();  // step ks + 1 landed (this thread's part)
      __syncthreads();                                 // ... and every thread's
      split(ks + 1);
    }
    wgmma_wait_all();
    pin(acc);
    __syncthreads();  // step ks + 1 split by all; step ks's products done before its slot is refilled
  }

  // Epilogue: warp w of warpgroup wg holds rows 16 w + g (+ 8) of the group's 64; acc[4 j + 2 h + e]
  // is (row g + 8 h, column 8 j + 2 t + e).
  const int lane = tid & 31, warp = (tid >> 5) & 3, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int col = n0 + 8 * j + 2 * t;
    if (col >= p.n) continue;  // N even: col + 1 < N too
    const float2 b = tessera::cuda::linear::bias_pair(p, col);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = m0 + wg * 64 + warp * 16 + g + 8 * h;
      if (row < p.m) tessera::cuda::linear::store_pair<RES>(p, row, col, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1], b);
    }
  }
#else
  __trap();  // built without sm_90a code; linear_wgmma_eligible keeps launches away
#endif
}

template <bool WT>
constexpr int smem_bytes() {
  return Layout<WT>::floats() * int(sizeof(float)) + 1024;  // + alignment slack
}

template <bool RES, bool WT>
void launch(const ops::LinearArgs& a, cudaStream_t s) {
  constexpr int kSmem = smem_bytes<WT>();
  constexpr auto kernel = &linear_wgmma_kernel<RES, WT>;
  tessera::cuda::linear::opt_in_shared<kernel>(kSmem);
  int64_t tiles = 0;
  const Params p = tessera::cuda::linear::params_for(a, BM, BN, tiles);
  kernel<<<unsigned(tiles), kThreads, kSmem, s>>>(p);
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace
}  // namespace tessera::cuda::linear_wgmma

namespace tessera::ops::detail {

bool linear_wgmma_eligible(const LinearArgs& a) {
  // The mma.sync kernel's operand rules (16-byte chunks of X and W along K, float2 stores of Y), on
  // a compute capability 9.0 device.
  return linear_tf32x3_eligible(a) && cuda_compute_capability(a.Y.device.index) == 90;
}

bool linear_wgmma_preferred(const LinearArgs& a, int device_index) {
  // H200 (bench/results/h200_20261203e, CUDA graphs): the wgmma tile wins where K is long and the
  // grid is many waves of its one CTA a multiprocessor: 1048576 x 256 -> 256 2.09 vs 2.28 ms, dX
  // 1048576 x 512 -> 128 2.07 vs 2.45, 65536 x 1024 -> 128 0.28 vs 0.31. At K = 128 (the layers'
  // projections of width-128 inputs) and on short grids (PubMed's 155 tiles) the mma.sync kernel is
  // 5-30% faster.
  namespace lw = tessera::cuda::linear_wgmma;
  const int64_t tiles = ((a.X.rows + lw::BM - 1) / lw::BM) * ((a.n() + lw::BN - 1) / lw::BN);
  return a.X.cols >= 256 && tiles >= 3 * int64_t(cuda_multiprocessors(device_index));
}

void linear_wgmma_cuda(const LinearArgs& a, const Exec& exec) {
  namespace lw = tessera::cuda::linear_wgmma;
  const cudaStream_t s = cuda_stream(exec.stream);
  const bool res = a.R.data != nullptr;
  if (a.w_transposed) return res ? lw::launch<true, true>(a, s) : lw::launch<false, true>(a, s);
  return res ? lw::launch<true, false>(a, s) : lw::launch<false, false>(a, s);
}

}  // namespace tessera::ops::detail
