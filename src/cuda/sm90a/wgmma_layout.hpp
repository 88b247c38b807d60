#pragma once
// The shared-memory layout the wgmma projection (linear_wgmma.cu) writes and its descriptors, as
// plain functions for host and device: the kernel calls exactly these, and
// tests/conformance/linear_test.cpp checks on the CPU that a stored element lies where the
// hardware's 128-byte swizzle reads it, so a layout slip is caught without a GPU.
//
// Source: PTX ISA, "Matrix Descriptor Format" and "Shared Memory Matrix Layout" (wgmma): a K-major
// tile in 128-byte swizzle mode is rows of 128 bytes; the 16-byte unit of byte address a is read
// from a ^ (((a >> 7) & 7) << 4), i.e. address bits 4-6 XOR bits 7-9, for tiles on 1024-byte
// boundaries.
#include <cstdint>

#if defined(__CUDACC__)
#define TESSERA_WGMMA_HD __host__ __device__ __forceinline__
#else
#define TESSERA_WGMMA_HD inline
#endif

namespace tessera::cuda::wgmma_layout {

constexpr int kRowFloats = 32;  // one 128-byte row: 32 fp32/tf32 values of K

// Float offset of 16-byte chunk c (K values 4c .. 4c+3) of row r in a swizzled [rows][32] tile.
TESSERA_WGMMA_HD constexpr int chunk_at(int r, int c) { return r * kRowFloats + ((c ^ (r & 7)) << 2); }

// The byte address the hardware reads for the 16-byte unit whose unswizzled address is `logical`.
TESSERA_WGMMA_HD constexpr uint32_t sw128_read_address(uint32_t logical) {
  return logical ^ (((logical >> 7) & 7u) << 4);
}

// Descriptor of a K-major, 128-byte-swizzled tile at shared address `addr` (1024-byte aligned):
// start >> 4 in bits 0-13, leading offset (unused in this mode: 1) in 16-29, 8-row-group stride
// 1024 >> 4 in 32-45, swizzle mode 1 (128 bytes) in 62-63. Adding 2 s moves the start 32 s bytes:
// the k-slice s of 8 values.
TESSERA_WGMMA_HD constexpr uint64_t tile_desc(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// Its low half, which is all that differs between tiles (the high half is a constant the wgmma
// wrapper takes as an immediate).
TESSERA_WGMMA_HD constexpr uint32_t tile_desc_lo(uint32_t addr) { return uint32_t(tile_desc(addr)); }

// The K order inside a 32-wide step. The products only sum over k, so A and B may visit a step's
// columns in any order they share. A's register fragment gives lane t (of 4 per row) positions t
// and t + 4 of each k-slice of 8 (PTX "wgmma .tf32 A in registers": a0 (g, t), a1 (g + 8, t),
// a2 (g, t + 4), a3 (g + 8, t + 4)). Slice s, position p reads step column slice_column(s, p), so
// that lane t's 8 values over the 4 slices are columns 8t .. 8t + 7 of its rows: two 16-byte
// chunks (2t, 2t + 1), loaded as two float4, where the natural order needs eight 4-byte loads.
// B, the weight, is split and stored in this order beforehand (split_weight_kernel), so its tiles
// stay plain K-major for the descriptors.
TESSERA_WGMMA_HD constexpr int slice_column(int s, int p) { return p < 4 ? 8 * p + 2 * s : 8 * (p - 4) + 2 * s + 1; }

}  // namespace tessera::cuda::wgmma_layout
