#pragma once
// Base kernels of the marginalized graph kernel: k_v on node pairs (values in (0, 1]) and k_e on
// edge pairs (values in [0, 1]). A BaseKernel is a flat composition (tensor product or weighted
// mean) of up to kMaxTerms terms, each a KroneckerDelta, SquareExponential or Constant applied to
// one feature (a node's / edge's discrete label or a node's real attribute vector). Flat on
// purpose: the same POD form (BaseKernelView) is evaluated by the CPU and the CUDA solver, and
// every term carries exactly one hyperparameter, so gradients are indexed by term.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/kernels/base_kernel_eval.hpp"

namespace tessera::kernels {

class BaseKernel {
 public:
  BaseKernel() : terms_{BaseTerm{}} {}  // Constant(1)
  BaseKernel(Combine c, std::vector<BaseTerm> terms) : combine_(c), terms_(std::move(terms)) {}
  // k = c. Node kernels need c in (0, 1], edge kernels c in [0, 1].
  static BaseKernel Constant(double c);
  // k = 1 if the features are equal, else h (h in [0, 1]; > 0 for node kernels).
  static BaseKernel KroneckerDelta(double h, Feature f = Feature::label);
  // k = exp(-|a - b|^2 / (2 l^2)), l > 0; on a label the label value is the scalar.
  static BaseKernel SquareExponential(double length_scale, Feature f = Feature::attributes);
  // Product of the parts' terms (each part a single term or itself a product).
  static BaseKernel TensorProduct(const std::vector<BaseKernel>& parts);
  // Weighted mean sum_t w_t k_t / sum_t w_t of single-term parts (weights default 1); the mean
  // keeps the value in the base-kernel range, which a plain sum would not.
  static BaseKernel Additive(const std::vector<BaseKernel>& parts, std::vector<double> weights = {});

  // Throws tessera::Error naming `role` ("node kernel", "edge kernel") and the bad term.
  void validate(const std::string& role, bool is_node) const;
  BaseKernelView view() const;
  int num_terms() const { return int(terms_.size()); }
  const std::vector<BaseTerm>& terms() const { return terms_; }
  Combine combine() const { return combine_; }
  bool uses(Feature f) const;
  // Hyperparameter t (the term's h, length scale or constant) read / replaced.
  double hyper(int t) const { return terms_.at(size_t(t)).hyper; }
  BaseKernel with_hyper(int t, double value) const;
  // "node.0.kronecker_delta.h(label)" style names, one per term.
  std::vector<std::string> hyper_names(const std::string& prefix) const;
  std::string describe() const;

  // Host evaluation (same code as the device).
  double operator()(int32_t la, const float* xa, int32_t lb, const float* xb, int dim) const {
    return view().eval(la, xa, lb, xb, dim);
  }

 private:
  Combine combine_ = Combine::product;
  std::vector<BaseTerm> terms_;
};

// Parses "constant:0.5", "delta:0.3", "delta:0.3@attributes", "sqexp:1.5",
// "product(delta:0.5,sqexp:2@attributes)", "mean(delta:0.5,constant:1)". Throws on bad text.
BaseKernel parse_base_kernel(const std::string& text);

}  // namespace tessera::kernels
