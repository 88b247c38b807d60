// Reference linear: the oracle. Y[i, j] = sum_k X[i, b(j) K + k] W[j, k] + sum_k X2[i, k] W2[j, k]
// (+ bias[j]) (+ R[i, j]) in double (b(j) = 0 but with heads); the weight gradient
// dW[n, k] = sum_m dY[m, n] X[m, k] and db[n] = sum_m dY[m, n] likewise.
#include <type_traits>

#include "ops/linear/backends.hpp"
#include "tessera/core/dtype.hpp"

namespace tessera::ops::detail {
namespace {

template <class T> double widen(T v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return double(static_cast<float>(v));
}
template <class T> T narrow(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return T(float(v));
}

}  // namespace

void linear_reference(const LinearArgs& a) {
  TESSERA_DISPATCH_FLOAT(a.Y.dtype, T, [&] {
    const T* x = a.X.as<T>();
    const T* w = a.W.as<T>();
    const T* b = static_cast<const T*>(a.bias);
    const T* r = a.R.data != nullptr ? a.R.as<const T>() : nullptr;
    T* y = a.Y.as<T>();
    // W[j, k] of the N x K weight, wherever its layout puts it.
    const int64_t w_row = a.w_transposed ? 1 : a.W.ld, w_col = a.w_transposed ? a.W.ld : 1;
    const int64_t per_block = a.n() / a.blocks, k_in = a.k();
    const T* x2 = a.has_x2() ? a.X2.as<const T>() : nullptr;
    const T* w2 = a.has_x2() ? a.W2.as<const T>() : nullptr;
    for (int64_t i = 0; i < a.X.rows; ++i)
      for (int64_t j = 0; j < a.n(); ++j) {
        double acc = b ? widen(b[j]) : 0.0;
        const T* xi = x + i * a.X.ld + (j / per_block) * k_in;  // the head's column block
        for (int64_t k = 0; k < k_in; ++k) acc += widen(xi[k]) * widen(w[j * w_row + k * w_col]);
        for (int64_t k = 0; x2 && k < a.X2.cols; ++k)
          acc += widen(x2[i * a.X2.ld + k]) * widen(w2[j * a.W2.ld + k]);
        if (r) acc += widen(r[i * a.R.ld + j]);  // read before the write: R may be Y
        y[i * a.Y.ld + j] = narrow<T>(acc);
      }
  });
}

void linear_weight_grad_reference(const LinearGradArgs& a) {
  TESSERA_DISPATCH_FLOAT(a.DW.dtype, T, [&] {
    const T* dy = a.DY.as<T>();
    const T* x = a.X.as<T>();
    T* dw = a.DW.as<T>();
    T* db = static_cast<T*>(a.db);
    for (int64_t n = 0; n < a.DY.cols; ++n) {
      for (int64_t k = 0; k < a.X.cols; ++k) {
        double acc = 0.0;
        for (int64_t m = 0; m < a.DY.rows; ++m) acc += widen(dy[m * a.DY.ld + n]) * widen(x[m * a.X.ld + k]);
        dw[n * a.DW.ld + k] = narrow<T>(acc);
      }
      if (db) {
        double acc = 0.0;
        for (int64_t m = 0; m < a.DY.rows; ++m) acc += widen(dy[m * a.DY.ld + n]);
        db[n] = narrow<T>(acc);
      }
    }
  });
}

}  // namespace tessera::ops::detail
