#pragma once
// Test helpers for the SpMM family: a dtype-erased host matrix with a leading dimension, NaN
// poisoning, error bounds derived from the data, and device copies for the *Cuda* tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tessera/core/dense.hpp"
#include "tessera/graph/csr.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>

#include "tessera/core/cuda_check.hpp"
#endif

namespace tessera::testing {

// Unit roundoff of the accumulation type and of the stored type.
inline double unit_acc(DType t) { return t == DType::f64 ? 0x1p-53 : 0x1p-24; }
inline double unit_out(DType t) {
  switch (t) {
    case DType::f64: return 0x1p-53;
    case DType::f32: return 0x1p-24;
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
  }
  return 1;
}

class HostMatrix {
 public:
  HostMatrix(DType t, int64_t rows, int64_t cols, int64_t ld)
      : t_(t), rows_(rows), cols_(cols), ld_(ld), bytes_(size_t(std::max<int64_t>(rows * ld, 1)) * dtype_size(t)) {
    buf_.assign(bytes_, 0);
  }
  DType dtype() const { return t_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t ld() const { return ld_; }
  size_t bytes() const { return bytes_; }
  void* data() { return buf_.data(); }
  const void* data() const { return buf_.data(); }
  DenseView view() const { return {const_cast<unsigned char*>(buf_.data()), t_, rows_, cols_, ld_, Device{}}; }

  double get(int64_t i, int64_t j) const { return get_flat(i * ld_ + j); }
  void set(int64_t i, int64_t j, double v) { set_flat(i * ld_ + j, v); }

  // Values in [-1, 1]; the padding between cols and ld holds NaN so a kernel that reads it shows.
  void fill_random(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    poison();
    for (int64_t i = 0; i < rows_; ++i)
      for (int64_t j = 0; j < cols_; ++j) set(i, j, u(rng));
  }
  // Every element (padding included) becomes the same NaN bit pattern.
  void poison() {
    for (int64_t k = 0; k < rows_ * ld_; ++k) set_flat(k, std::numeric_limits<double>::quiet_NaN());
    poison_ = buf_;
  }
  // True when the bytes of padding element (i, j >= cols) still hold the poison pattern.
  bool padding_intact(int64_t i, int64_t j) const {
    const size_t es = dtype_size(t_), off = size_t(i * ld_ + j) * es;
    return std::memcmp(buf_.data() + off, poison_.data() + off, es) == 0;
  }

 private:
  double get_flat(int64_t k) const {
    const unsigned char* p = buf_.data() + size_t(k) * dtype_size(t_);
    switch (t_) {
      case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
      case DType::f64: { double v; std::memcpy(&v, p, 8); return v; }
      case DType::f16: { uint16_t b; std::memcpy(&b, p, 2); return half_bits_to_float(b); }
      case DType::bf16: { uint16_t b; std::memcpy(&b, p, 2); return bf16_bits_to_float(b); }
    }
    return 0;
  }
  void set_flat(int64_t k, double v) {
    unsigned char* p = buf_.data() + size_t(k) * dtype_size(t_);
    switch (t_) {
      case DType::f32: { float f = float(v); std::memcpy(p, &f, 4); break; }
      case DType::f64: std::memcpy(p, &v, 8); break;
      case DType::f16: { uint16_t b = float_to_half_bits(float(v)); std::memcpy(p, &b, 2); break; }
      case DType::bf16: { uint16_t b = float_to_bf16_bits(float(v)); std::memcpy(p, &b, 2); break; }
    }
  }
  DType t_;
  int64_t rows_, cols_, ld_;
  size_t bytes_;
  std::vector<unsigned char> buf_, poison_;
};

// Weight of entry k as the backends see it.
template <class I>
double entry_weight(const CsrView<I>& g, const void* values, DType dt, int64_t k) {
  if (values) return dt == DType::f64 ? static_cast<const double*>(values)[k] : static_cast<const float*>(values)[k];
  return g.values ? double(g.values[k]) : 1.0;
}

// Relative error a variant adds by rounding its operands below the dtype's precision (tensor-core
// paths: tf32 rounds X and w to 10-bit mantissas, fp16/bf16 WSB tiles round the weights).
inline double operand_rel_error(const std::string& variant) {
  if (variant.find("tf32") != std::string::npos) return 2 * 0x1p-11;
  if (variant.find("wsb.f16") != std::string::npos) return 2 * 0x1p-11;
  if (variant.find("wsb.bf16") != std::string::npos) return 2 * 0x1p-8;
  return 0;
}

// Per-element error bound for Y = A X: sum_k |w_k x_k| times (accumulation roundoff with a margin
// that grows like sqrt(degree) - the statistical size of recursive-summation error - plus the
// output rounding). A dropped or doubled edge in float64 is many orders of magnitude above it.
template <class I>
std::vector<double> error_bound(const CsrView<I>& g, const void* values, const HostMatrix& X, DType dt,
                                double operand_rel = 0, const std::vector<double>& bias = {}) {
  const int64_t F = X.cols();
  std::vector<double> out(size_t(g.rows * F), 0.0), xsum(static_cast<size_t>(F), 0.0);
  // float16 has subnormals below 2^-14: values there are rounded to a fixed absolute spacing of
  // 2^-24, which no relative bound covers. Weights converted to f16 (the wsb.f16 tiles) and tiny
  // outputs each get that absolute floor.
  const double sub = dt == DType::f16 ? 0x1p-24 : 0.0;
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t deg = int64_t(g.rowptr[i + 1] - g.rowptr[i]);
    // Output term: one ulp (2u), since a slightly different accumulated value may round the other way.
    const double rel = unit_acc(dt) * (8.0 + std::sqrt(double(deg))) + 2 * unit_out(dt) + operand_rel;
    std::fill(xsum.begin(), xsum.end(), 0.0);
    for (int64_t k = int64_t(g.rowptr[i]); k < int64_t(g.rowptr[i + 1]); ++k) {
      const double w = std::fabs(entry_weight(g, values, dt, k));
      for (int64_t f = 0; f < F; ++f) {
        const double x = std::fabs(X.get(int64_t(g.col[k]), f));
        out[size_t(i * F + f)] += w * x;
        xsum[size_t(f)] += x;
      }
    }
    for (int64_t f = 0; f < F; ++f) {
      const double b = bias.empty() ? 0.0 : std::fabs(bias[size_t(f)]);  // one more term of the sum
      out[size_t(i * F + f)] = (out[size_t(i * F + f)] + b) * rel + sub * (2.0 + xsum[size_t(f)]);
    }
  }
  return out;
}

// NaN never passes (!(d <= tol) is true for NaN); the padding of Y must be untouched.
inline void expect_close(const HostMatrix& Y, const HostMatrix& ref, const std::vector<double>& bound, DType dt,
                         const std::string& ctx) {
  int bad = 0;
  for (int64_t i = 0; i < Y.rows() && bad < 5; ++i) {
    for (int64_t f = 0; f < Y.cols() && bad < 5; ++f) {
      const double got = Y.get(i, f), want = ref.get(i, f);
      const double tol = bound[size_t(i * Y.cols() + f)];
      if (!(std::fabs(got - want) <= tol) || std::isnan(want)) {
        ADD_FAILURE() << ctx << ": Y[" << i << "," << f << "] = " << got << ", reference " << want
                      << ", tolerance " << tol;
        ++bad;
      }
    }
    for (int64_t f = Y.cols(); f < Y.ld() && bad < 5; ++f)
      if (!Y.padding_intact(i, f)) {
        ADD_FAILURE() << ctx << ": padding Y[" << i << "," << f << "] was written";
        ++bad;
      }
  }
}

template <class I>
void expect_sddmm_close(const CsrView<I>& g, const HostMatrix& dY, const HostMatrix& X, const void* ref,
                        const void* got, DType dt, const std::string& ctx) {
  const bool f64 = dt == DType::f64;
  auto at = [&](const void* p, int64_t k) {
    return f64 ? static_cast<const double*>(p)[k] : double(static_cast<const float*>(p)[k]);
  };
  int bad = 0;
  const int64_t F = X.cols();
  const double rel = unit_acc(dt) * (8.0 + std::sqrt(double(F))) * 2;
  for (int64_t i = 0; i < g.rows && bad < 5; ++i)
    for (int64_t k = int64_t(g.rowptr[i]); k < int64_t(g.rowptr[i + 1]) && bad < 5; ++k) {
      double absum = 0;
      for (int64_t f = 0; f < F; ++f) absum += std::fabs(dY.get(i, f) * X.get(int64_t(g.col[k]), f));
      const double d = std::fabs(at(got, k) - at(ref, k));
      if (!(d <= rel * absum + 1e-300) || std::isnan(at(ref, k))) {
        ADD_FAILURE() << ctx << ": dw[" << k << "] (row " << i << ") = " << at(got, k) << ", reference "
                      << at(ref, k) << ", tolerance " << rel * absum;
        ++bad;
      }
    }
}

#ifdef TESSERA_WITH_CUDA
// Device copies for the *Cuda* tests (synchronous copies: test code, not a hot path).
// `offset` bytes in front of the data make the view start off the allocation's 256-byte
// alignment (like a sliced tensor): kernels must then take their unaligned paths.
class DeviceCopy {
 public:
  DeviceCopy(const void* host, size_t bytes, size_t offset = 0) : bytes_(bytes) {
    if (!bytes) return;
    TESSERA_CUDA_CHECK(cudaMalloc(&raw_, bytes + offset));
    ptr = static_cast<unsigned char*>(raw_) + offset;
    if (host) TESSERA_CUDA_CHECK(cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice));
  }
  explicit DeviceCopy(const HostMatrix& m, size_t offset = 0) : DeviceCopy(m.data(), m.bytes(), offset) {}
  ~DeviceCopy() {
    if (raw_) cudaFree(raw_);
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  DenseView view(const HostMatrix& like) const {
    return {ptr, like.dtype(), like.rows(), like.cols(), like.ld(), Device{DeviceKind::cuda, 0}};
  }
  void copy_back(void* host, size_t bytes, const Exec& ex) const {
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(cuda_stream(ex.stream)));
    if (bytes) TESSERA_CUDA_CHECK(cudaMemcpy(host, ptr, bytes, cudaMemcpyDeviceToHost));
  }
  void copy_back(HostMatrix& m, const Exec& ex) const { copy_back(m.data(), m.bytes(), ex); }
  void* ptr = nullptr;

 private:
  void* raw_ = nullptr;
  size_t bytes_;
};

// After a CUDA variant ran: surfaces a launch error or an asynchronous fault (misaligned address,
// illegal access) right here, so the failure names the variant that caused it instead of the
// next unrelated CUDA call. Returns "" or the error text.
inline std::string cuda_fault_after(const Exec& ex) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaStreamSynchronize(cuda_stream(ex.stream));
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return e == cudaSuccess ? std::string() : std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

template <class I>
class DeviceGraph {
 public:
  explicit DeviceGraph(const Csr<I>& g)
      : host_(g),
        rowptr_(g.rowptr.data(), g.rowptr.size() * sizeof(I)),
        col_(g.col.data(), g.col.size() * sizeof(I)),
        values_(g.values.data(), g.values.size() * sizeof(float)) {}
  CsrView<I> view() const {
    CsrView<I> v = host_.view();
    v.rowptr = static_cast<const I*>(rowptr_.ptr);
    v.col = static_cast<const I*>(col_.ptr);
    v.values = host_.weighted() ? static_cast<const float*>(values_.ptr) : nullptr;
    v.device = Device{DeviceKind::cuda, 0};
    return v;
  }

 private:
  const Csr<I>& host_;
  DeviceCopy rowptr_, col_, values_;
};
#endif

}  // namespace tessera::testing
