#pragma once
// Hopper's tensor memory accelerator (TMA) and the shared-memory barriers that count its bytes, for
// the sm_90a kernels: the device instructions (inside TESSERA_HAVE_WGMMA_CODE, as wgmma.cuh) and the
// host's 2-D tensor map.
//
// Why: a CTA's loads issued by one thread cost the other threads no registers and no instructions.
// The wgmma projection at 128 x 128 tiles has 128 registers a thread (2 CTAs of 256 threads a
// multiprocessor); its per-thread cp.async address arithmetic spilled 12-48 bytes inside the K loop
// (ptxas -v), and ncu put 40% of its stall cycles on local-memory (L1TEX) waits.
//
// Source: PTX ISA, "cp.async.bulk.tensor", "cp.async.bulk", "mbarrier"; CUDA driver API,
// cuTensorMapEncodeTiled. Obtained through the runtime's driver entry point, so nothing links
// libcuda directly.
#include <cuda.h>

#include <cstdint>

#include "cuda/sm90a/wgmma.cuh"  // TESSERA_HAVE_WGMMA_CODE

namespace tessera::cuda::tma {

// A row-major float matrix (rows x cols, leading dimension ld floats) as a TMA tensor of boxes of
// box_rows x box_cols, 128-byte swizzled in shared memory (box_cols * 4 must be 128: one swizzle
// row) and zero-filled past its edges. Throws tessera::Error when the driver refuses it.
CUtensorMap map_2d(const float* base, int64_t rows, int64_t cols, int64_t ld, int box_rows, int box_cols);

#ifdef TESSERA_HAVE_WGMMA_CODE
__device__ __forceinline__ void barrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the barriers' initialisation visible to the async proxy (the TMA's completions).
__device__ __forceinline__ void barrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival that also expects `bytes` of asynchronous copies before the phase completes.
__device__ __forceinline__ void arrive_expect_bytes(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Waits until the barrier's phase with parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// The box at (col, row) of `map` into shared memory at dst (1024-byte aligned for the swizzle),
// its bytes completing on bar (which arrive_expect_bytes told to expect them).
__device__ __forceinline__ void load_box(uint32_t dst, const CUtensorMap& map, int col, int row, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(col), "r"(row), "r"(bar)
      : "memory");
}
// `bytes` contiguous bytes (a multiple of 16, both ends 16-byte aligned) into shared memory at dst.
__device__ __forceinline__ void load_bytes(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
#endif

}  // namespace tessera::cuda::tma
