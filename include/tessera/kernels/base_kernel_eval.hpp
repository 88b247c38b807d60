#pragma once
// POD form of a base kernel, evaluated identically on the host and in CUDA device code.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__ __forceinline__
#else
#define TESSERA_HD inline
#endif

namespace tessera::kernels {

enum class Feature : uint8_t { label, attributes };
enum class BaseKind : uint8_t { constant, kronecker_delta, square_exponential };
enum class Combine : uint8_t { product, mean };

struct BaseTerm {
  BaseKind kind = BaseKind::constant;
  Feature feature = Feature::label;
  double hyper = 1.0;   // c, h or length scale
  double weight = 1.0;  // only used by Combine::mean
};

constexpr int kMaxTerms = 8;

struct BaseKernelView {
  int n = 0;
  Combine combine = Combine::product;
  BaseKind kind[kMaxTerms] = {};
  Feature feature[kMaxTerms] = {};
  double hyper[kMaxTerms] = {};
  double weight[kMaxTerms] = {};  // normalized to sum 1 for mean

  // Value of term t and its derivative with respect to hyper[t].
  TESSERA_HD void term(int t, int32_t la, const float* xa, int32_t lb, const float* xb, int dim,
                       double& value, double& deriv) const {
    bool equal;
    double d2 = 0;
    if (feature[t] == Feature::label) {
      equal = la == lb;
      d2 = double(la - lb) * double(la - lb);
    } else {
      equal = true;
      for (int k = 0; k < dim; ++k) {
        const double d = double(xa[k]) - double(xb[k]);
        equal = equal && d == 0;
        d2 += d * d;
      }
    }
    switch (kind[t]) {
      case BaseKind::constant: value = hyper[t]; deriv = 1; return;
      case BaseKind::kronecker_delta:
        value = equal ? 1.0 : hyper[t];
        deriv = equal ? 0.0 : 1.0;
        return;
      case BaseKind::square_exponential: {
        const double l = hyper[t];
        value = exp(-d2 / (2 * l * l));
        deriv = value * d2 / (l * l * l);
        return;
      }
    }
    value = 0; deriv = 0;
  }

  TESSERA_HD double eval(int32_t la, const float* xa, int32_t lb, const float* xb, int dim) const {
    double acc = combine == Combine::product ? 1.0 : 0.0;
    for (int t = 0; t < n; ++t) {
      double v, d;
      term(t, la, xa, lb, xb, dim, v, d);
      acc = combine == Combine::product ? acc * v : acc + weight[t] * v;
    }
    return acc;
  }

  // d k / d hyper[t].
  TESSERA_HD double grad(int t, int32_t la, const float* xa, int32_t lb, const float* xb, int dim) const {
    if (combine == Combine::mean) {
      double v, d;
      term(t, la, xa, lb, xb, dim, v, d);
      return weight[t] * d;
    }
    double acc = 1.0;
    for (int s = 0; s < n; ++s) {
      double v, d;
      term(s, la, xa, lb, xb, dim, v, d);
      acc *= (s == t) ? d : v;
    }
    return acc;
  }
};

}  // namespace tessera::kernels
