#include "column_sums.hpp"

#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace tessera::pt {

namespace {

// At least n ones of t's dtype on t's device, made on the current stream and cached per stream:
// a stream's reads are ordered after its own fill, so no synchronization is needed. Only grows
// (to twice the need), so a training step allocates and fills nothing.
at::Tensor ones_for_rows(const at::Tensor& t, int64_t n) {
  static std::mutex mu;
  static std::map<std::tuple<int, int, int, int64_t>, at::Tensor> cache;
  const c10::Stream stream = c10::impl::VirtualGuardImpl(t.device().type()).getStream(t.device());
  const auto key = std::make_tuple(int(t.device().type()), int(t.device().index()), int(t.scalar_type()),
                                   int64_t(stream.id()));
  std::lock_guard<std::mutex> lock(mu);
  at::Tensor& ones = cache[key];
  if (!ones.defined() || ones.numel() < n) ones = at::ones({std::max<int64_t>(2 * n, 1024)}, t.options());
  return ones.narrow(0, 0, n);
}

}  // namespace

at::Tensor column_sums(const at::Tensor& t, at::ScalarType dtype) {
  const auto st = t.scalar_type();
  if (t.is_cuda() && t.dim() == 2 && (st == at::kFloat || st == at::kDouble) && t.size(0) > 0 && t.size(1) > 0 &&
      t.stride(1) == 1) {
    at::Tensor s = at::mv(t.t(), ones_for_rows(t, t.size(0)));
    return s.scalar_type() == dtype ? s : s.to(dtype);
  }
  return t.sum(0, false, dtype);
}

}  // namespace tessera::pt
