#include "views.hpp"

#include <ATen/Parallel.h>

#include "tessera/core/error.hpp"

namespace tessera::pt {

DType dtype_from(const at::Tensor& t, const char* what) {
  switch (t.scalar_type()) {
    case at::kFloat: return DType::f32;
    case at::kDouble: return DType::f64;
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default: break;
  }
  fail(what, " must be float32, float64, float16 or bfloat16, got ", c10::toString(t.scalar_type()));
}

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::f32: return at::kFloat;
    case DType::f64: return at::kDouble;
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
  }
  fail("unknown tessera dtype");
}

at::ScalarType accum_type(at::ScalarType feature) {
  return feature == at::kDouble ? at::kDouble : at::kFloat;
}

IndexType index_type_from(const at::Tensor& t, const char* what) {
  if (t.scalar_type() == at::kInt) return IndexType::i32;
  if (t.scalar_type() == at::kLong) return IndexType::i64;
  fail(what, " must be an int32 or int64 index tensor, got ", c10::toString(t.scalar_type()));
}

Device device_from(const at::Device& d) {
  if (d.is_cpu()) return Device{};
  if (d.is_cuda()) return Device{DeviceKind::cuda, d.has_index() ? int(d.index()) : 0};
  fail("tessera supports cpu and cuda tensors, got a tensor on ", d.str());
}

namespace {
void check_device(const at::Tensor& t, const Device& device, const char* op, const char* name) {
  const Device d = device_from(t.device());
  TESSERA_CHECK(d == device, op, ": ", name, " is on ", d.str(), " but the operation runs on ",
                device.str(), " (move all inputs to one device)");
}
void check_defined(const at::Tensor& t, const char* op, const char* name) {
  TESSERA_CHECK(t.defined(), op, ": ", name, " is undefined (None)");
}
}  // namespace

DenseView dense_view(const at::Tensor& t, const Device& device, const char* op, const char* name) {
  check_defined(t, op, name);
  TESSERA_CHECK(t.dim() == 2, op, ": ", name, " must be 2-D (nodes x features), got ", t.dim(), "-D ",
                t.sizes());
  check_device(t, device, op, name);
  DenseView v;
  v.dtype = dtype_from(t, (std::string(op) + ": " + name).c_str());
  v.rows = t.size(0);
  v.cols = t.size(1);
  // Rows may be strided (a column slice of a wider matrix), columns must be packed.
  TESSERA_CHECK(v.cols <= 1 || t.stride(1) == 1, op, ": ", name,
                " must have contiguous rows (column stride 1, got ", t.stride(1), "); call .contiguous()");
  v.ld = v.rows <= 1 ? v.cols : t.stride(0);
  TESSERA_CHECK(v.ld >= v.cols, op, ": ", name, " has row stride ", v.ld, " smaller than its ", v.cols,
                " columns (overlapping rows); call .contiguous()");
  v.data = t.data_ptr();
  v.device = device;
  return v;
}

void check_csr_args(const at::Tensor& rowptr, const at::Tensor& col, const char* op) {
  check_defined(rowptr, op, "rowptr");
  check_defined(col, op, "col");
  TESSERA_CHECK(rowptr.dim() == 1 && rowptr.size(0) >= 1, op,
                ": rowptr must be 1-D with rows + 1 >= 1 entries, got shape ", rowptr.sizes());
  TESSERA_CHECK(col.dim() == 1, op, ": col must be 1-D, got shape ", col.sizes());
  const auto rt = rowptr.scalar_type(), ct = col.scalar_type();
  TESSERA_CHECK((rt == at::kInt || rt == at::kLong) && rt == ct, op,
                ": rowptr and col must share one index type (int32 or int64), got ", c10::toString(rt), " and ",
                c10::toString(ct));
}

template <class I>
CsrView<I> csr_view(const at::Tensor& rowptr, const at::Tensor& col, int64_t cols, const Device& device,
                    const char* op, uint64_t graph_id) {
  check_defined(rowptr, op, "rowptr");
  check_defined(col, op, "col");
  constexpr auto want = std::is_same_v<I, int32_t> ? at::kInt : at::kLong;
  TESSERA_CHECK(rowptr.scalar_type() == want && col.scalar_type() == want, op,
                ": rowptr and col must share one index type (int32 or int64), got ",
                c10::toString(rowptr.scalar_type()), " and ", c10::toString(col.scalar_type()));
  TESSERA_CHECK(rowptr.dim() == 1 && rowptr.size(0) >= 1, op,
                ": rowptr must be 1-D with rows + 1 >= 1 entries, got shape ", rowptr.sizes());
  TESSERA_CHECK(col.dim() == 1, op, ": col must be 1-D, got shape ", col.sizes());
  TESSERA_CHECK(rowptr.is_contiguous() && col.is_contiguous(), op, ": rowptr and col must be contiguous");
  check_device(rowptr, device, op, "rowptr");
  check_device(col, device, op, "col");
  TESSERA_CHECK(cols >= 0, op, ": number of columns must be >= 0, got ", cols);
  CsrView<I> v;
  v.rows = rowptr.size(0) - 1;
  v.cols = cols;
  v.nnz = col.size(0);
  v.rowptr = rowptr.data_ptr<I>();
  v.col = col.data_ptr<I>();
  v.values = nullptr;
  v.device = device;
  v.id = graph_id;
  return v;
}
template CsrView<int32_t> csr_view<int32_t>(const at::Tensor&, const at::Tensor&, int64_t, const Device&,
                                            const char*, uint64_t);
template CsrView<int64_t> csr_view<int64_t>(const at::Tensor&, const at::Tensor&, int64_t, const Device&,
                                            const char*, uint64_t);

void check_values(const at::Tensor& v, int64_t nnz, at::ScalarType dtype, const Device& device,
                  const char* op, const char* name) {
  check_defined(v, op, name);
  TESSERA_CHECK(v.dim() == 1 && v.size(0) == nnz, op, ": ", name, " must be 1-D with one entry per edge (",
                nnz, "), got shape ", v.sizes());
  TESSERA_CHECK(v.scalar_type() == dtype, op, ": ", name, " must be ", c10::toString(dtype), ", got ",
                c10::toString(v.scalar_type()));
  TESSERA_CHECK(v.is_contiguous(), op, ": ", name, " must be contiguous");
  check_device(v, device, op, name);
}

TorchExec::TorchExec(const at::Tensor& like) : guard_(like.device()) {
  exec_.device = device_from(like.device());
  if (exec_.device.is_cuda()) {
#ifdef TESSERA_TORCH_CUDA
    exec_.stream = torch_current_cuda_stream(exec_.device.index);
    exec_.alloc = torch_cuda_allocator();
#else
    fail("this tessera op library was built without CUDA support but got a tensor on ",
         exec_.device.str(), " (rebuild against a CUDA-enabled torch)");
#endif
  } else {
    exec_.threads = at::get_num_threads();
  }
}

}  // namespace tessera::pt
