// Base kernels: construction, validation, names and the small text syntax used by the CLI.
#include "tessera/kernels/base_kernel.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::kernels {
namespace {
const char* kind_name(BaseKind k) {
  switch (k) {
    case BaseKind::constant: return "constant";
    case BaseKind::kronecker_delta: return "kronecker_delta";
    case BaseKind::square_exponential: return "square_exponential";
  }
  return "?";
}
const char* hyper_name(BaseKind k) {
  switch (k) {
    case BaseKind::constant: return "c";
    case BaseKind::kronecker_delta: return "h";
    case BaseKind::square_exponential: return "length_scale";
  }
  return "?";
}
const char* feature_name(Feature f) { return f == Feature::label ? "label" : "attributes"; }

BaseKernel single(BaseKind kind, Feature f, double hyper) {
  BaseTerm t;
  t.kind = kind;
  t.feature = f;
  t.hyper = hyper;
  return BaseKernel(Combine::product, {t});
}
}  // namespace

BaseKernel BaseKernel::Constant(double c) { return single(BaseKind::constant, Feature::label, c); }
BaseKernel BaseKernel::KroneckerDelta(double h, Feature f) { return single(BaseKind::kronecker_delta, f, h); }
BaseKernel BaseKernel::SquareExponential(double l, Feature f) {
  return single(BaseKind::square_exponential, f, l);
}

BaseKernel BaseKernel::TensorProduct(const std::vector<BaseKernel>& parts) {
  TESSERA_CHECK(!parts.empty(), "TensorProduct: needs at least one part");
  std::vector<BaseTerm> terms;
  for (size_t i = 0; i < parts.size(); ++i) {
    TESSERA_CHECK(parts[i].combine_ == Combine::product || parts[i].terms_.size() == 1,
                  "TensorProduct: part ", i, " is an Additive composition; only flat compositions "
                  "(a product of terms or a mean of terms) are supported");
    for (const auto& t : parts[i].terms_) terms.push_back(t);
  }
  for (auto& t : terms) t.weight = 1;
  TESSERA_CHECK(int(terms.size()) <= kMaxTerms, "TensorProduct: ", terms.size(), " terms, at most ",
                kMaxTerms, " are supported");
  return BaseKernel(Combine::product, std::move(terms));
}

BaseKernel BaseKernel::Additive(const std::vector<BaseKernel>& parts, std::vector<double> weights) {
  TESSERA_CHECK(!parts.empty(), "Additive: needs at least one part");
  if (weights.empty()) weights.assign(parts.size(), 1.0);
  TESSERA_CHECK(weights.size() == parts.size(), "Additive: ", parts.size(), " parts but ",
                weights.size(), " weights");
  TESSERA_CHECK(int(parts.size()) <= kMaxTerms, "Additive: ", parts.size(), " terms, at most ",
                kMaxTerms, " are supported");
  std::vector<BaseTerm> terms;
  for (size_t i = 0; i < parts.size(); ++i) {
    TESSERA_CHECK(parts[i].terms_.size() == 1, "Additive: part ", i,
                  " is a composition; only single terms can be averaged");
    TESSERA_CHECK(std::isfinite(weights[i]) && weights[i] >= 0, "Additive: weight ", i, " = ",
                  weights[i], " must be finite and >= 0");
    BaseTerm t = parts[i].terms_[0];
    t.weight = weights[i];
    terms.push_back(t);
  }
  return BaseKernel(Combine::mean, std::move(terms));
}

void BaseKernel::validate(const std::string& role, bool is_node) const {
  TESSERA_CHECK(!terms_.empty(), role, ": no terms");
  TESSERA_CHECK(int(terms_.size()) <= kMaxTerms, role, ": ", terms_.size(), " terms, at most ", kMaxTerms);
  double wsum = 0;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const BaseTerm& t = terms_[i];
    const double x = t.hyper;
    TESSERA_CHECK(std::isfinite(x), role, ": term ", i, " (", kind_name(t.kind), ") has a non-finite ",
                  hyper_name(t.kind), " = ", x);
    switch (t.kind) {
      case BaseKind::constant:
        TESSERA_CHECK(x <= 1 && (is_node ? x > 0 : x >= 0), role, ": term ", i, " constant c = ", x,
                      " must lie in ", is_node ? "(0, 1]" : "[0, 1]");
        break;
      case BaseKind::kronecker_delta:
        TESSERA_CHECK(x <= 1 && (is_node ? x > 0 : x >= 0), role, ": term ", i,
                      " kronecker_delta h = ", x, " must lie in ", is_node ? "(0, 1]" : "[0, 1]",
                      is_node ? " (a node kernel must be positive)" : "");
        break;
      case BaseKind::square_exponential:
        TESSERA_CHECK(x > 0, role, ": term ", i, " square_exponential length_scale = ", x,
                      " must be > 0");
        break;
    }
    TESSERA_CHECK(is_node || t.feature == Feature::label, role, ": term ", i,
                  " uses attributes, but edges carry only labels (and weights, which enter A)");
    TESSERA_CHECK(std::isfinite(t.weight) && t.weight >= 0, role, ": term ", i, " weight ", t.weight);
    wsum += t.weight;
  }
  TESSERA_CHECK(combine_ == Combine::product || wsum > 0, role, ": Additive weights sum to 0");
}

BaseKernelView BaseKernel::view() const {
  BaseKernelView v;
  v.n = int(terms_.size());
  v.combine = combine_;
  double wsum = 0;
  for (const auto& t : terms_) wsum += t.weight;
  for (int i = 0; i < v.n && i < kMaxTerms; ++i) {
    v.kind[i] = terms_[size_t(i)].kind;
    v.feature[i] = terms_[size_t(i)].feature;
    v.hyper[i] = terms_[size_t(i)].hyper;
    v.weight[i] = combine_ == Combine::mean ? terms_[size_t(i)].weight / wsum : 1.0;
  }
  return v;
}

bool BaseKernel::uses(Feature f) const {
  for (const auto& t : terms_)
    if (t.kind != BaseKind::constant && t.feature == f) return true;
  return false;
}

BaseKernel BaseKernel::with_hyper(int t, double value) const {
  TESSERA_CHECK(t >= 0 && t < num_terms(), "base kernel has no hyperparameter ", t);
  BaseKernel k = *this;
  k.terms_[size_t(t)].hyper = value;
  return k;
}

std::vector<std::string> BaseKernel::hyper_names(const std::string& prefix) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < terms_.size(); ++i)
    out.push_back(detail::concat(prefix, ".", i, ".", kind_name(terms_[i].kind), ".",
                                 hyper_name(terms_[i].kind), "(", feature_name(terms_[i].feature), ")"));
  return out;
}

std::string BaseKernel::describe() const {
  std::ostringstream os;
  if (terms_.size() > 1) os << (combine_ == Combine::product ? "product(" : "mean(");
  for (size_t i = 0; i < terms_.size(); ++i) {
    const auto& t = terms_[i];
    if (i) os << ",";
    os << (t.kind == BaseKind::constant ? "constant" : t.kind == BaseKind::kronecker_delta ? "delta" : "sqexp")
       << ":" << t.hyper;
    if (t.kind != BaseKind::constant) os << "@" << feature_name(t.feature);
    if (combine_ == Combine::mean && t.weight != 1) os << "*" << t.weight;
  }
  if (terms_.size() > 1) os << ")";
  return os.str();
}

namespace {
BaseKernel parse_term(const std::string& text) {
  const auto colon = text.find(':');
  TESSERA_CHECK(colon != std::string::npos, "base kernel '", text, "': expected NAME:VALUE[@label|@attributes]");
  const std::string name = text.substr(0, colon);
  std::string rest = text.substr(colon + 1);
  Feature f = name == "sqexp" ? Feature::attributes : Feature::label;
  if (const auto at = rest.find('@'); at != std::string::npos) {
    const std::string feat = rest.substr(at + 1);
    TESSERA_CHECK(feat == "label" || feat == "attributes", "base kernel '", text, "': unknown feature '",
                  feat, "' (label or attributes)");
    f = feat == "label" ? Feature::label : Feature::attributes;
    rest = rest.substr(0, at);
  }
  char* end = nullptr;
  const double x = std::strtod(rest.c_str(), &end);
  TESSERA_CHECK(!rest.empty() && end && *end == 0, "base kernel '", text, "': '", rest, "' is not a number");
  if (name == "constant") return BaseKernel::Constant(x);
  if (name == "delta") return BaseKernel::KroneckerDelta(x, f);
  if (name == "sqexp") return BaseKernel::SquareExponential(x, f);
  fail("base kernel '", text, "': unknown kind '", name, "' (constant, delta, sqexp)");
}
}  // namespace

BaseKernel parse_base_kernel(const std::string& text) {
  for (const char* head : {"product(", "mean("}) {
    const std::string h = head;
    if (text.rfind(h, 0) == 0) {
      TESSERA_CHECK(text.back() == ')', "base kernel '", text, "': missing ')'");
      std::vector<BaseKernel> parts;
      std::stringstream ss(text.substr(h.size(), text.size() - h.size() - 1));
      for (std::string item; std::getline(ss, item, ',');) parts.push_back(parse_term(item));
      return h == "product(" ? BaseKernel::TensorProduct(parts) : BaseKernel::Additive(parts);
    }
  }
  return parse_term(text);
}

}  // namespace tessera::kernels
