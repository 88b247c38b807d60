// CUDA column sums (column_sums.hpp): cuBLAS's gemv of the matrix against a kept vector of ones,
// called directly on torch's handle and current stream.
//
// Why not at::mv(t.t(), at::ones(rows)): on the H200's host each of those ops costs tens of us
// (the ones' allocation and fill launch, mv's output and dispatch layers, a narrow;
// bench/results/h200_20261203d, host_*.txt), and a GATv2 training step takes three column sums.
// The ones are kept per device and dtype and only read. They are made or grown outside CUDA graph
// capture only, and the stream is synchronized once after their fill, so every later reader, on
// any stream or inside a captured graph, sees them; under capture a kept vector too short is made
// per call (from the graph's pool), as before. They are never freed (rows x 4 or 8 bytes for the
// largest gradient seen) and deliberately leaked at exit, when the CUDA context may be gone.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>
#include <cublas_v2.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "../column_sums.hpp"
#include "tessera/core/error.hpp"

namespace tessera::pt {

namespace {

// At least n ones of options' dtype on its device (the kept vector, or a fresh one under capture).
at::Tensor ones_for(int64_t n, const at::TensorOptions& options) {
  static std::mutex mu;
  static auto* kept = new std::map<std::pair<int, int>, at::Tensor>();  // (device, dtype) -> ones
  const std::pair<int, int> key{int(options.device().index()), int(options.dtype().toScalarType())};
  std::lock_guard<std::mutex> lock(mu);
  auto it = kept->find(key);
  if (it != kept->end() && it->second.numel() >= n) return it->second;
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None)
    return at::ones({n}, options);
  const int64_t len = std::max<int64_t>(n, it == kept->end() ? 0 : 2 * it->second.numel());
  at::Tensor ones = at::ones({len}, options);
  c10::cuda::getCurrentCUDAStream(options.device().index()).synchronize();
  (*kept)[key] = ones;
  return ones;
}

}  // namespace

at::Tensor column_sums_cuda(const at::Tensor& t) {
  const int64_t rows = t.size(0), cols = t.size(1);
  TESSERA_CHECK(rows <= INT32_MAX && cols <= INT32_MAX && t.stride(0) <= INT32_MAX,
                "column_sums: ", rows, " x ", cols, " (row stride ", t.stride(0), ") is past cuBLAS's 32-bit sizes");
  const at::Tensor ones = ones_for(rows, t.options());
  at::Tensor out = at::empty({cols}, t.options());
  // Row-major [rows, cols] with row stride ld is column-major [cols, rows] with leading dimension
  // ld: out = that matrix times the ones (a single row's stride may be anything: at least cols).
  const int ld = int(std::max<int64_t>(rows > 1 ? t.stride(0) : cols, cols));
  cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();  // on torch's current stream
  // alpha and beta live on the host: make sure the handle reads them there, and leave it as found.
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  cublasGetPointerMode(handle, &mode);
  if (mode != CUBLAS_POINTER_MODE_HOST) cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
  cublasStatus_t st;
  if (t.scalar_type() == at::kFloat) {
    const float one = 1.f, zero = 0.f;
    st = cublasSgemv(handle, CUBLAS_OP_N, int(cols), int(rows), &one, t.data_ptr<float>(), ld,
                     ones.data_ptr<float>(), 1, &zero, out.data_ptr<float>(), 1);
  } else {
    TESSERA_CHECK(t.scalar_type() == at::kDouble, "column_sums (cuda): float32 or float64 only, got ",
                  t.scalar_type());
    const double one = 1.0, zero = 0.0;
    st = cublasDgemv(handle, CUBLAS_OP_N, int(cols), int(rows), &one, t.data_ptr<double>(), ld,
                     ones.data_ptr<double>(), 1, &zero, out.data_ptr<double>(), 1);
  }
  if (mode != CUBLAS_POINTER_MODE_HOST) cublasSetPointerMode(handle, mode);
  TESSERA_CHECK(st == CUBLAS_STATUS_SUCCESS, "column_sums: cuBLAS gemv failed (", cublasGetStatusName(st), ") on a ", rows,
                " x ", cols, " ", t.scalar_type(), " matrix");
  return out;
}

}  // namespace tessera::pt
