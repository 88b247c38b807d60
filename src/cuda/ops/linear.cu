// Launchers of the fp32 tf32x3 projection (device code in linear_kernels.cuh).
#include <cstdint>
#include <limits>

#include "cuda/ops/linear_launch.cuh"
#include "ops/linear/backends.hpp"
#include "tessera/core/cuda_check.hpp"

namespace tessera::ops::detail {
namespace {

using tessera::cuda::linear::aligned;

template <int BM, int BN, int WM, int WN, bool RES, bool WT>
void launch(const LinearArgs& a, cudaStream_t s) {
  namespace lk = tessera::cuda::linear;
  constexpr int kSmem = lk::smem_bytes<BM, BN, WT>();
  constexpr auto kernel = &lk::linear_tf32x3_kernel<BM, BN, WM, WN, RES, WT>;
  lk::opt_in_shared<kernel>(kSmem);
  int64_t tiles = 0;
  const lk::Params p = lk::params_for(a, BM, BN, tiles);
  kernel<<<unsigned(tiles), WM * WN * 32, kSmem, s>>>(p);
  TESSERA_CUDA_LAUNCH_CHECK();
}

}  // namespace

LinearTile linear_tf32x3_default_tile(const LinearArgs& a, int device_index) {
  // H200, GPU time per call from CUDA graphs (bench/results/h200_20261202g, h200_20261203,
  // h200_20261203c/tile_probe_*.txt).
  // - Up to 2 tiles of 128x128 per multiprocessor: 64x64, whose 4x as many CTAs (4 fit an SM) fill
  //   the machine where the big tiles leave a short, half-empty last wave: 19717 x 1024 -> 128 (a
  //   GATv2 8x128 dx, 155 tiles) 109 -> 94 us, 19717 x 256 -> 128 30.8 -> 26.3, 2708 x 1024 -> 128
  //   39.6 -> 24.4, 2708 x 128 -> 512 13.0 -> 10.2 (against the 128x64 the rule below took).
  // - N <= 64: 128x64 wins at every M (the 128x128 tile computes half padding), 2^20 x 64 -> 64
  //   0.23 vs 0.32 ms.
  // - Otherwise 128x128 once its grid is several waves (2^20 rows, 1.07-1.12x; 19717 x 128 -> 1024,
  //   1240 tiles: 95 vs 100 us; 65536 x 1024 -> 128, 512 tiles: 269 vs 292 (128x64) and 316 (64x64)),
  //   and 128x64 while the 128x128 grid is short of 3 tiles per SM (19717 x 128 -> 256, 310 tiles:
  //   28.7 vs 30.8 us). The 3 lies between those two measurements (2.3 and 3.9 tiles per SM).
  const int64_t sms = cuda_multiprocessors(device_index);
  const int64_t tiles_128 = ((a.X.rows + 127) / 128) * ((a.n() + 127) / 128);
  if (tiles_128 <= 2 * sms) return {64, 64};
  if (a.n() <= 64 || tiles_128 < 3 * sms) return {128, 64};
  return {128, 128};
}

bool linear_tf32x3_eligible(const LinearArgs& a) { return a.plain() && linear_operands_fit(a); }

bool linear_operands_fit(const LinearArgs& a) {
  const int64_t int_max = std::numeric_limits<int32_t>::max();
  return a.Y.device.is_cuda() && a.Y.dtype == DType::f32 && a.X.cols % 4 == 0 &&
         a.n() % (a.w_transposed ? 4 : 2) == 0 && a.X.cols <= int_max && a.n() <= int_max && a.X.ld % 4 == 0 &&
         a.W.ld % 4 == 0 && a.Y.ld % 2 == 0 &&
         aligned(a.X.data, 16) && aligned(a.W.data, 16) && aligned(a.Y.data, 8) &&
         (a.bias == nullptr || aligned(a.bias, 4)) &&
         (a.R.data == nullptr || (aligned(a.R.data, 8) && a.R.ld % 2 == 0));
}

namespace {
// The tile's kernel for this residual and W layout.
template <int BM, int BN, int WM, int WN>
void launch_tile(const LinearArgs& a, cudaStream_t s) {
  const bool res = a.R.data != nullptr;
  if (a.w_transposed)
    return res ? launch<BM, BN, WM, WN, true, true>(a, s) : launch<BM, BN, WM, WN, false, true>(a, s);
  return res ? launch<BM, BN, WM, WN, true, false>(a, s) : launch<BM, BN, WM, WN, false, false>(a, s);
}
}  // namespace

void linear_tf32x3_cuda(const LinearArgs& a, const Exec& exec, LinearTile tile) {
  const cudaStream_t s = cuda_stream(exec.stream);
  if (tile.bm == 128 && tile.bn == 128) return launch_tile<128, 128, 2, 4>(a, s);
  if (tile.bm == 128 && tile.bn == 64) return launch_tile<128, 64, 4, 2>(a, s);
  if (tile.bm == 64 && tile.bn == 64) return launch_tile<64, 64, 2, 2>(a, s);
  fail("linear: no tf32x3 kernel with a ", tile.bm, "x", tile.bn, " tile");
}

}  // namespace tessera::ops::detail
