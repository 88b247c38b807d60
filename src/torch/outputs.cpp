#include "outputs.hpp"

#include <torch/library.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "boundary.hpp"

namespace tessera::pt {

int64_t huge_output_min_bytes() {
  static const int64_t min_bytes = [] {
    const char* v = std::getenv("TESSERA_CPU_HUGE_OUTPUTS");
    return v != nullptr && std::strcmp(v, "0") == 0 ? std::numeric_limits<int64_t>::max()
                                                     : int64_t(kHugePageOutputBytes);
  }();
  return min_bytes;
}

at::Tensor empty_output(at::IntArrayRef sizes, const at::TensorOptions& options) {
  if (!options.device().is_cpu()) return at::empty(sizes, options);
  int64_t n = 1;
  for (const int64_t s : sizes) n *= s;
  const size_t bytes = size_t(n) * options.dtype().itemsize();
  if (int64_t(bytes) < huge_output_min_bytes()) return at::empty(sizes, options);
  constexpr size_t kHuge = size_t(2) << 20;
  const size_t len = (bytes + kHuge - 1) / kHuge * kHuge;  // aligned_alloc wants a multiple of the alignment
  void* p = std::aligned_alloc(kHuge, len);
  if (p == nullptr) return at::empty(sizes, options);  // let torch's allocator report the failure
  madvise(p, len, MADV_HUGEPAGE);  // advice only: an error (THP unavailable) leaves ordinary pages
  return at::from_blob(p, sizes, [](void* q) { std::free(q); }, options);
}

namespace {
// For the Python layers' dense projections (tessera/nn/_linear.py), whose outputs torch would
// allocate: a CPU tensor on the same memory as the ops' outputs.
at::Tensor empty_output_op(c10::ArrayRef<int64_t> sizes, c10::ScalarType dtype) {
  return empty_output(sizes, at::TensorOptions().dtype(dtype));
}
}  // namespace

}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("empty_output(int[] sizes, ScalarType dtype) -> Tensor", TESSERA_OP(tessera::pt::empty_output_op));
  m.def("huge_output_min_bytes() -> int", TESSERA_OP(tessera::pt::huge_output_min_bytes));
}
