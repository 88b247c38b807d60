#pragma once
// Checked CUDA / cuSPARSE / cuBLAS calls: every failure becomes a tessera::Error naming the call,
// the file and line, and the library's own message. Include only from CUDA-aware sources.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "tessera/core/error.hpp"

#define TESSERA_CUDA_CHECK(call)                                                         \
  do {                                                                                   \
    cudaError_t _e = (call);                                                             \
    if (_e != cudaSuccess)                                                               \
      ::tessera::fail("CUDA error ", cudaGetErrorName(_e), " (", cudaGetErrorString(_e), \
                      ") in ", #call, " at ", __FILE__, ":", __LINE__);                  \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next call.
#define TESSERA_CUDA_LAUNCH_CHECK() TESSERA_CUDA_CHECK(cudaGetLastError())

#define TESSERA_CUSPARSE_CHECK(call)                                                     \
  do {                                                                                   \
    cusparseStatus_t _s = (call);                                                        \
    if (_s != CUSPARSE_STATUS_SUCCESS)                                                   \
      ::tessera::fail("cuSPARSE error ", cusparseGetErrorName(_s), " (",                \
                      cusparseGetErrorString(_s), ") in ", #call, " at ", __FILE__, ":", \
                      __LINE__);                                                         \
  } while (0)

#define TESSERA_CUBLAS_CHECK(call)                                                       \
  do {                                                                                   \
    cublasStatus_t _s = (call);                                                          \
    if (_s != CUBLAS_STATUS_SUCCESS)                                                     \
      ::tessera::fail("cuBLAS error ", cublasGetStatusName(_s), " in ", #call, " at ",  \
                      __FILE__, ":", __LINE__);                                          \
  } while (0)

namespace tessera {
// The stream an Exec names; never the legacy default stream (nullptr -> per-thread stream).
inline cudaStream_t cuda_stream(const void* s) {
  return s ? static_cast<cudaStream_t>(const_cast<void*>(s)) : cudaStreamPerThread;
}

// Multiprocessor count of a CUDA device (-1: the current one), queried once per device: grid
// sizing and schedules ask on every launch.
int cuda_multiprocessors(int device = -1);
// Compute capability of a CUDA device as 10 major + minor (90 for sm_90), queried once per device.
int cuda_compute_capability(int device = -1);
// Resident blocks per multiprocessor of `kernel` launched with `threads` threads and `smem` bytes of
// dynamic shared memory on the current device, first opting the kernel in to more than 48 KB where
// smem needs it. Asked once per (device, kernel, threads, smem): launchers that size their grid by it
// run on every call, and the two runtime queries cost microseconds of host time each call.
int cuda_resident_blocks(const void* kernel, int threads, size_t smem);

// GPU time between start() and stop() on a stream; the events live and die with the object (also
// when a checked call throws between them).
class CudaEventPair {
 public:
  CudaEventPair() {
    TESSERA_CUDA_CHECK(cudaEventCreate(&a_));
    TESSERA_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~CudaEventPair() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  CudaEventPair(const CudaEventPair&) = delete;
  CudaEventPair& operator=(const CudaEventPair&) = delete;
  void start(cudaStream_t s) { TESSERA_CUDA_CHECK(cudaEventRecord(a_, s)); }
  void stop(cudaStream_t s) { TESSERA_CUDA_CHECK(cudaEventRecord(b_, s)); }
  // Waits for stop() to complete.
  float elapsed_ms() const {
    TESSERA_CUDA_CHECK(cudaEventSynchronize(b_));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
    return ms;
  }

 private:
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};
}  // namespace tessera
