// Reference SpMM / SDDMM: the oracle. Plain loops, double accumulation, every dtype, no tricks.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/spmm/variants.hpp"

namespace tessera::ops::reference {

namespace {
// The accumulation (and weight) type of an element type: double for float64, float otherwise.
template <class T> using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T> double to_double(T v) { return double(Acc<T>(v)); }
template <class T> T from_double(double v) { return T(Acc<T>(v)); }

// Edge weight k: explicit values (accumulation type of T), else A.values, else 1.
template <class T, class I>
double weight(const void* values, const CsrView<I>& A, int64_t k) {
  if (values) return double(static_cast<const Acc<T>*>(values)[k]);
  if (A.values) return double(A.values[k]);
  return 1.0;
}

template <class T, class I>
void spmm_typed(const SpmmArgs<I>& a) {
  const auto& A = a.A;
  const int64_t F = a.X.cols;
  const T* X = a.X.template as<const T>();
  T* Y = a.Y.template as<T>();
  const auto* bias = static_cast<const Acc<T>*>(a.bias);
  std::vector<double> acc(static_cast<size_t>(F));
  for (int64_t i = 0; i < A.rows; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = int64_t(A.rowptr[i]); k < int64_t(A.rowptr[i + 1]); ++k) {
      const double w = weight<T>(a.values, A, k);
      const T* x = X + int64_t(A.col[k]) * a.X.ld;
      for (int64_t f = 0; f < F; ++f) acc[size_t(f)] += w * to_double(x[f]);
    }
    T* y = Y + i * a.Y.ld;
    for (int64_t f = 0; f < F; ++f) y[f] = from_double<T>(acc[size_t(f)] + (bias ? double(bias[f]) : 0.0));
  }
}

template <class T, class I>
void sddmm_typed(const SddmmArgs<I>& a) {
  const auto& A = a.A;
  const int64_t F = a.X.cols;
  auto* dw = static_cast<Acc<T>*>(a.dw);
  for (int64_t i = 0; i < A.rows; ++i) {
    const T* dy = a.dY.template as<const T>() + i * a.dY.ld;
    for (int64_t k = int64_t(A.rowptr[i]); k < int64_t(A.rowptr[i + 1]); ++k) {
      const T* x = a.X.template as<const T>() + int64_t(A.col[k]) * a.X.ld;
      double s = 0;
      for (int64_t f = 0; f < F; ++f) s += to_double(dy[f]) * to_double(x[f]);
      dw[k] = Acc<T>(s);
    }
  }
}
}  // namespace

template <class I>
void spmm(const SpmmArgs<I>& a) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, T, [&] { spmm_typed<T>(a); });
}
template <class I>
void sddmm(const SddmmArgs<I>& a) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, T, [&] { sddmm_typed<T>(a); });
}

template void spmm<int32_t>(const SpmmArgs<int32_t>&);
template void spmm<int64_t>(const SpmmArgs<int64_t>&);
template void sddmm<int32_t>(const SddmmArgs<int32_t>&);
template void sddmm<int64_t>(const SddmmArgs<int64_t>&);

}  // namespace tessera::ops::reference
