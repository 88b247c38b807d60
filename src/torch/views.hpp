#pragma once
// Tensor -> core view conversion for the torch layer (src/torch is the only place that sees both
// torch and the core). Every check raises tessera::Error naming the operator argument and what
// was wrong ("spmm: x must be float32/float64/float16/bfloat16, got Long"), which torch turns
// into a Python RuntimeError with the same text.
//
// Pattern for an operator kernel (see spmm_op.cpp):
//   TorchExec ex(x);                                  // device guard, stream, allocator
//   auto A = csr_view<int32_t>(rowptr, col, cols, "spmm", id);
//   ops::spmm(args, ex.get());
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

#include <cstdint>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::pt {

// torch dtype <-> tessera DType (float types only; others throw naming `what`).
DType dtype_from(const at::Tensor& t, const char* what);
at::ScalarType scalar_type(DType d);
// Accumulation type of a feature dtype: float64 for float64, float32 otherwise (the dtype edge
// weights and edge-weight gradients have).
at::ScalarType accum_type(at::ScalarType feature);

// Index tensors must be int32 or int64 (the two widths every sparse kernel is compiled for).
IndexType index_type_from(const at::Tensor& t, const char* what);

Device device_from(const at::Device& d);

// A 2-D row-major view. Requires: 2-D, unit column stride (row stride may exceed cols), a float
// dtype, and storage on `device`. `op`/`name` make the messages.
DenseView dense_view(const at::Tensor& t, const Device& device, const char* op, const char* name);

// CSR view over (rowptr, col): 1-D contiguous index tensors of the same integer type I, on
// `device`, rowptr of rows+1 entries. Values are passed separately (SpmmArgs::values) so the
// view carries none. Checks shapes only; contents (monotone offsets, column range) are the
// caller's or validate()'s business, because reading them on a GPU costs a synchronization.
template <class I>
CsrView<I> csr_view(const at::Tensor& rowptr, const at::Tensor& col, int64_t cols, const Device& device,
                    const char* op, uint64_t graph_id = 0);

// The structural checks every op taking (rowptr, col) runs FIRST, before reading sizes or data:
// both defined, 1-D, rowptr with rows + 1 >= 1 entries, int32/int64 and of one index type.
void check_csr_args(const at::Tensor& rowptr, const at::Tensor& col, const char* op);

// 1-D contiguous edge values of dtype `dtype`, nnz long, on `device`.
void check_values(const at::Tensor& v, int64_t nnz, at::ScalarType dtype, const Device& device,
                  const char* op, const char* name);

// Everything an operator call needs on a tensor's device: a device guard (so kernels launch on
// that GPU), an Exec with torch's current CUDA stream and an allocator backed by torch's caching
// allocator (CUDA), or torch's intra-op thread count (CPU). Keep it alive for the call.
class TorchExec {
 public:
  explicit TorchExec(const at::Tensor& like);
  const Exec& get() const { return exec_; }
  const Device& device() const { return exec_.device; }

 private:
  c10::OptionalDeviceGuard guard_;
  Exec exec_;
};

#ifdef TESSERA_TORCH_CUDA
// Defined in src/torch/cuda/exec.cpp: torch's current stream on `index` and an Allocator backed
// by c10::cuda::CUDACachingAllocator (raw_alloc_with_stream / raw_delete).
void* torch_current_cuda_stream(int index);
Allocator* torch_cuda_allocator();
#endif

}  // namespace tessera::pt
