#pragma once
// Dense row-major matrices: DenseView borrows (any dtype, any device), Dense<T> owns host memory.
#include <cstdint>
#include <vector>

#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"

namespace tessera {

struct DenseView {
  void* data = nullptr;
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0;
  int64_t ld = 0;                 // elements between consecutive rows (>= cols)
  Device device{};
  template <class T> T* as() const { return static_cast<T*>(data); }
  size_t bytes() const { return size_t(rows) * size_t(cols) * dtype_size(dtype); }
  bool contiguous() const { return ld == cols; }
};

template <class T>
struct Dense {
  int64_t rows = 0, cols = 0;
  std::vector<T> data;
  Dense() = default;
  Dense(int64_t r, int64_t c, T fill = T{}) : rows(r), cols(c), data(size_t(r) * size_t(c), fill) {}
  T& operator()(int64_t i, int64_t j) { return data[size_t(i) * size_t(cols) + size_t(j)]; }
  const T& operator()(int64_t i, int64_t j) const { return data[size_t(i) * size_t(cols) + size_t(j)]; }
  T* row(int64_t i) { return data.data() + size_t(i) * size_t(cols); }
  const T* row(int64_t i) const { return data.data() + size_t(i) * size_t(cols); }
  DenseView view() { return {data.data(), dtype_of<T>::value, rows, cols, cols, Device{}}; }
  DenseView view() const {
    return {const_cast<T*>(data.data()), dtype_of<T>::value, rows, cols, cols, Device{}};
  }
};

}  // namespace tessera
