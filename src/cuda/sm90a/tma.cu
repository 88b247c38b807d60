// Host side of cuda/sm90a/tma.cuh: the 2-D tensor maps of the TMA loads.
#include "cuda/sm90a/tma.cuh"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include "tessera/core/cuda_check.hpp"
#include "tessera/core/error.hpp"

namespace tessera::cuda::tma {
namespace {

// The driver's encoder, looked up once through the runtime (no link against libcuda).
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    TESSERA_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
    TESSERA_CHECK(found == cudaDriverEntryPointSuccess && f != nullptr,
                  "tma: the CUDA driver has no cuTensorMapEncodeTiled (needs a CUDA 12 driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

}  // namespace

CUtensorMap map_2d(const float* base, int64_t rows, int64_t cols, int64_t ld, int box_rows, int box_cols) {
  TESSERA_CHECK(rows > 0 && cols > 0 && ld >= cols && (ld * 4) % 16 == 0 && box_cols * 4 == 128,
                "tma: cannot map a ", rows, " x ", cols, " matrix (leading dimension ", ld, ") in ", box_rows, " x ",
                box_cols, " boxes");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * 4};  // bytes between rows
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult r = encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
                               step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TESSERA_CHECK(r == CUDA_SUCCESS, "tma: cuTensorMapEncodeTiled failed (CUresult ", int(r), ") for a ", rows, " x ",
                cols, " matrix, leading dimension ", ld, ", at ", static_cast<const void*>(base));
  return map;
}

}  // namespace tessera::cuda::tma
