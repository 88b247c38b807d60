// Reference segment reduce: the oracle. Obvious loops, double arithmetic, the tie and NaN rules
// of include/tessera/ops/segment_reduce.hpp written out literally.
#include <cmath>
#include <vector>

#include "ops/segment_reduce/backends.hpp"

namespace tessera::ops::detail {
namespace {

template <class T> double load(const DenseView& m, int64_t r, int64_t c) {
  return double(static_cast<float>(m.as<T>()[r * m.ld + c]));
}
template <> double load<double>(const DenseView& m, int64_t r, int64_t c) {
  return m.as<double>()[r * m.ld + c];
}
template <class T> void store(const DenseView& m, int64_t r, int64_t c, double v) {
  m.as<T>()[r * m.ld + c] = T(float(v));
}
template <> void store<double>(const DenseView& m, int64_t r, int64_t c, double v) {
  m.as<double>()[r * m.ld + c] = v;
}

// Does candidate (v, j) beat the current best (b, bj)? `sign` = +1 for max, -1 for min.
bool beats(double v, int64_t j, double b, int64_t bj, int sign) {
  const bool vn = std::isnan(v), bn = std::isnan(b);
  if (vn || bn) return vn && (!bn || j < bj);        // NaN is the extreme of both orders
  if (v == b) return j < bj;                          // tie: smallest source index
  return sign > 0 ? v > b : v < b;
}

template <class T, class I>
void forward(const SegmentReduceArgs<I>& a) {
  const auto& g = a.A;
  const int64_t F = a.X.cols;
  const int sign = a.reduce == Reduce::max ? 1 : -1;
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t b = int64_t(g.rowptr[i]), e = int64_t(g.rowptr[i + 1]);
    for (int64_t f = 0; f < F; ++f) {
      double acc = 0;
      int64_t arg = -1;
      for (int64_t k = b; k < e; ++k) {
        const int64_t j = int64_t(g.col[k]);
        const double v = load<T>(a.X, j, f);
        if (a.reduce == Reduce::sum || a.reduce == Reduce::mean) {
          acc += v;
        } else if (arg < 0 || beats(v, j, acc, arg, sign)) {
          acc = v;
          arg = j;
        }
      }
      if (a.reduce == Reduce::mean && e > b) acc /= double(e - b);
      store<T>(a.Y, i, f, acc);
      if (has_arg(a.reduce) && a.arg) a.arg[i * F + f] = arg;
    }
  }
}

template <class T, class I>
void backward(const SegmentReduceBackwardArgs<I>& a) {
  const auto& g = a.A;
  const int64_t F = a.dY.cols;
  std::vector<double> dx(size_t(g.cols) * size_t(F), 0.0);
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t b = int64_t(g.rowptr[i]), e = int64_t(g.rowptr[i + 1]);
    for (int64_t f = 0; f < F; ++f) {
      const double d = load<T>(a.dY, i, f);
      if (has_arg(a.reduce)) {
        const int64_t j = a.arg[i * F + f];
        if (j >= 0) dx[size_t(j) * F + f] += d;
      } else {
        const double s = a.reduce == Reduce::mean && e > b ? d / double(e - b) : d;
        for (int64_t k = b; k < e; ++k) dx[size_t(g.col[k]) * F + f] += s;
      }
    }
  }
  for (int64_t j = 0; j < g.cols; ++j)
    for (int64_t f = 0; f < F; ++f) store<T>(a.dX, j, f, dx[size_t(j) * F + f]);
}

}  // namespace

template <class I> void segment_reduce_reference(const SegmentReduceArgs<I>& a) {
  TESSERA_DISPATCH_FLOAT(a.X.dtype, T, [&] { forward<T, I>(a); });
}
template <class I> void segment_reduce_backward_reference(const SegmentReduceBackwardArgs<I>& a) {
  TESSERA_DISPATCH_FLOAT(a.dY.dtype, T, [&] { backward<T, I>(a); });
}

template void segment_reduce_reference<int32_t>(const SegmentReduceArgs<int32_t>&);
template void segment_reduce_reference<int64_t>(const SegmentReduceArgs<int64_t>&);
template void segment_reduce_backward_reference<int32_t>(const SegmentReduceBackwardArgs<int32_t>&);
template void segment_reduce_backward_reference<int64_t>(const SegmentReduceBackwardArgs<int64_t>&);

}  // namespace tessera::ops::detail
