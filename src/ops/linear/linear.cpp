// Linear dispatch: validate once, pick a variant with tune::choose (requested > tuned > cache >
// heuristic), run it. The variant table is the single source for the dispatcher, the tuner and
// the tests.
#include <string>

#include "ops/linear/backends.hpp"
#include "tessera/core/error.hpp"
#include "tessera/tune/choose.hpp"

namespace tessera::ops {

namespace {

bool overlaps(const DenseView& a, const DenseView& b) {
  if (a.rows * a.cols == 0 || b.rows * b.cols == 0) return false;
  const auto* a0 = static_cast<const char*>(a.data);
  const auto* b0 = static_cast<const char*>(b.data);
  const auto* a1 = a0 + ((a.rows - 1) * a.ld + a.cols) * int64_t(dtype_size(a.dtype));
  const auto* b1 = b0 + ((b.rows - 1) * b.ld + b.cols) * int64_t(dtype_size(b.dtype));
  return a0 < b1 && b0 < a1;
}

void check_matrix(const DenseView& m, const char* name) {
  TESSERA_CHECK(m.rows >= 0 && m.cols >= 0, "linear: ", name, " has negative shape ", m.rows, " x ", m.cols);
  TESSERA_CHECK(m.ld >= m.cols, "linear: ", name, " has leading dimension ", m.ld, " < ", m.cols, " columns");
  TESSERA_CHECK(m.data != nullptr || m.rows * m.cols == 0, "linear: ", name, " has no data");
}

tune::Registry<LinearArgs> make_registry() {
  tune::Registry<LinearArgs> r("linear");
  r.add({"reference", tune::Backend::reference, nullptr,
         [](const LinearArgs& a, const Exec&) { detail::linear_reference(a); },
         "plain loops, double accumulation (the oracle)"});
#ifdef TESSERA_WITH_CUDA
  for (detail::LinearTile t : {detail::LinearTile{128, 128}, detail::LinearTile{128, 64}, detail::LinearTile{64, 64}})
    r.add({"cuda.tf32x3." + std::to_string(t.bm) + "x" + std::to_string(t.bn), tune::Backend::cuda,
           [](const LinearArgs& a) { return detail::linear_tf32x3_eligible(a); },
           [t](const LinearArgs& a, const Exec& e) { detail::linear_tf32x3_cuda(a, e, t); },
           "fp32 as three tf32 tensor-core products (x_lo w_hi + x_hi w_lo + x_hi w_hi), cp.async pipeline"});
#endif
#ifdef TESSERA_WITH_WGMMA
  for (int wgs : {2, 1})
    r.add({"cuda.wgmma." + std::to_string(64 * wgs) + "x128", tune::Backend::cuda,
           [](const LinearArgs& a) { return detail::linear_wgmma_eligible(a); },
           [wgs](const LinearArgs& a, const Exec& e) { detail::linear_wgmma_cuda(a, e, wgs); },
           "the three tf32 products on Hopper's wgmma: W split once per call, X split in registers (sm_90a)"});
  r.add({"cuda.wgmma.resident", tune::Backend::cuda,
         [](const LinearArgs& a) { return detail::linear_wgmma_resident_eligible(a); },
         [](const LinearArgs& a, const Exec& e) { detail::linear_wgmma_resident_cuda(a, e); },
         "the same products for K <= 128: W's n-tile resident in shared memory, persistent CTAs stream X (sm_90a)"});
#endif
  r.set_heuristic([](const LinearArgs& a, const Device& d) -> std::string {
    if (!d.is_cuda()) return "reference";
#ifdef TESSERA_WITH_WGMMA
    if (detail::linear_wgmma_resident_eligible(a) && detail::linear_wgmma_resident_preferred(a, d.index))
      return "cuda.wgmma.resident";
    if (detail::linear_wgmma_eligible(a)) {
      // Heads and a second input have no other kernel: its 64-row tile where the tf32x3 ones would win.
      const int wgs = detail::linear_wgmma_preferred(a, d.index);
      if (wgs != 0 || !a.plain()) return "cuda.wgmma." + std::to_string(64 * (wgs == 0 ? 1 : wgs)) + "x128";
    }
#endif
#ifdef TESSERA_WITH_CUDA
    const detail::LinearTile t = detail::linear_tf32x3_default_tile(a, d.index);
    return "cuda.tf32x3." + std::to_string(t.bm) + "x" + std::to_string(t.bn);
#else
    return "reference";
#endif
  });
  return r;
}

tune::Key key_of(const LinearArgs& a, const Exec& exec) {
  // The best tile depends on the rows too (how many waves the grid makes): their bucket is in the key.
  // W's layout, heads and a second input change the kernels that can run: their own keys.
  const std::string op = std::string(a.w_transposed ? "linear.wt" : "linear") +
                         (a.blocks > 1 ? ".heads" : "") + (a.has_x2() ? ".x2" : "");
  return {tune::device_key(exec.device), op, dtype_name(a.X.dtype),
          "k" + std::to_string(tune::width_bucket(a.X.cols)) + ".m" + std::to_string(tune::width_bucket(a.X.rows)),
          tune::width_bucket(a.n())};
}

tune::Registry<LinearGradArgs> make_weight_grad_registry() {
  tune::Registry<LinearGradArgs> r("linear_weight_grad");
  r.add({"reference", tune::Backend::reference, nullptr,
         [](const LinearGradArgs& a, const Exec&) { detail::linear_weight_grad_reference(a); },
         "plain loops, double accumulation (the oracle)"});
#ifdef TESSERA_WITH_WGMMA
  r.add({"cuda.wgmma.dw", tune::Backend::cuda, [](const LinearGradArgs& a) { return detail::linear_weight_grad_wgmma_eligible(a); },
         [](const LinearGradArgs& a, const Exec& e) { detail::linear_weight_grad_wgmma_cuda(a, e); },
         "three tf32 products on Hopper's wgmma, M split in fixed slices summed in order, db from the same loads (sm_90a)"});
#endif
  r.set_heuristic([](const LinearGradArgs&, const Device& d) -> std::string {
    return d.is_cuda() ? "cuda.wgmma.dw" : "reference";  // choose() falls back to an eligible one
  });
  return r;
}

tune::Key grad_key_of(const LinearGradArgs& a, const Exec& exec) {
  return {tune::device_key(exec.device), "linear_weight_grad", dtype_name(a.X.dtype),
          "k" + std::to_string(tune::width_bucket(a.X.cols)) + ".m" + std::to_string(tune::width_bucket(a.X.rows)),
          tune::width_bucket(a.DY.cols)};
}

}  // namespace

void validate_linear(const LinearArgs& a) {
  check_matrix(a.X, "X");
  check_matrix(a.W, "W");
  check_matrix(a.Y, "Y");
  TESSERA_CHECK(a.blocks >= 1, "linear: blocks (heads) is ", a.blocks, ", must be at least 1");
  TESSERA_CHECK(a.plain() || !a.w_transposed, "linear: heads and a second input are not for W given K x N");
  if (a.blocks > 1) {
    TESSERA_CHECK(a.n() % a.blocks == 0, "linear: W has ", a.n(), " rows, not a multiple of the ", a.blocks, " heads");
    TESSERA_CHECK(a.X.cols == a.blocks * a.k(), "linear: X has ", a.X.cols, " columns but ", a.blocks,
                  " heads of W's input width ", a.k(), " need ", a.blocks * a.k());
  } else {
    TESSERA_CHECK(a.k() == a.X.cols, "linear: X has ", a.X.cols, " columns but W", a.w_transposed ? " (K x N)" : "",
                  " has ", a.k(), a.w_transposed ? " rows" : " columns", " (both must be the input width K)");
  }
  TESSERA_CHECK(a.Y.rows == a.X.rows && a.Y.cols == a.n(), "linear: Y is ", a.Y.rows, " x ", a.Y.cols, " but ",
                a.w_transposed ? "X W" : "X W^T", " is ", a.X.rows, " x ", a.n());
  TESSERA_CHECK(a.X.dtype == a.Y.dtype && a.W.dtype == a.Y.dtype, "linear: X is ", dtype_name(a.X.dtype),
                ", W is ", dtype_name(a.W.dtype), ", Y is ", dtype_name(a.Y.dtype), " (one dtype for all)");
  TESSERA_CHECK(a.X.device == a.Y.device && a.W.device == a.Y.device, "linear: X on ", a.X.device.str(), ", W on ",
                a.W.device.str(), ", Y on ", a.Y.device.str());
  TESSERA_CHECK(!overlaps(a.Y, a.X) && !overlaps(a.Y, a.W), "linear: Y overlaps an input");
  check_matrix(a.X2, "X2 (second input)");
  check_matrix(a.W2, "W2 (second weight)");
  TESSERA_CHECK(a.X2.cols == a.W2.cols, "linear: the second input X2 has ", a.X2.cols, " columns but W2 has ",
                a.W2.cols, " (both must be its width K2)");
  if (a.has_x2()) {
    TESSERA_CHECK(a.X2.rows == a.X.rows && a.W2.rows == a.n(), "linear: X2 is ", a.X2.rows, " x ", a.X2.cols,
                  " and W2 ", a.W2.rows, " x ", a.W2.cols, " but X has ", a.X.rows, " rows and Y ", a.n(), " columns");
    TESSERA_CHECK(a.X2.dtype == a.Y.dtype && a.W2.dtype == a.Y.dtype && a.X2.device == a.Y.device &&
                      a.W2.device == a.Y.device,
                  "linear: X2 is ", dtype_name(a.X2.dtype), " on ", a.X2.device.str(), ", W2 ", dtype_name(a.W2.dtype),
                  " on ", a.W2.device.str(), ", Y ", dtype_name(a.Y.dtype), " on ", a.Y.device.str());
    TESSERA_CHECK(!overlaps(a.Y, a.X2) && !overlaps(a.Y, a.W2), "linear: Y overlaps an input");
  }
  if (a.R.data != nullptr) {
    check_matrix(a.R, "R (residual)");
    TESSERA_CHECK(a.R.rows == a.Y.rows && a.R.cols == a.Y.cols, "linear: residual R is ", a.R.rows, " x ",
                  a.R.cols, " but Y is ", a.Y.rows, " x ", a.Y.cols);
    TESSERA_CHECK(a.R.dtype == a.Y.dtype && a.R.device == a.Y.device, "linear: residual R is ",
                  dtype_name(a.R.dtype), " on ", a.R.device.str(), ", Y is ", dtype_name(a.Y.dtype), " on ",
                  a.Y.device.str());
    const bool same = a.R.data == a.Y.data && a.R.ld == a.Y.ld;
    TESSERA_CHECK(same || !overlaps(a.Y, a.R), "linear: residual R overlaps Y without being Y");
  }
  if (a.w_split != nullptr) {
    TESSERA_CHECK(!a.w_transposed, "linear: a weight split (w_split) is for an N x K weight, not W given K x N");
    const size_t want = linear_split_weight_bytes(a.W, a.has_x2() ? a.W2 : DenseView{});
    TESSERA_CHECK(a.w_split_bytes == want, "linear: the weight split has ", a.w_split_bytes, " bytes but W (",
                  a.W.rows, " x ", a.W.cols, ", ", dtype_name(a.W.dtype), " on ", a.W.device.str(), ") needs ", want,
                  want == 0 ? " (no variant reads a split there)" : " (made for another W?)");
  }
}

size_t linear_split_weight_bytes(const DenseView& W, const DenseView& W2) {
#ifdef TESSERA_WITH_WGMMA  // W2 against W: validate_linear and linear_split_weight check it before asking
  if (W.device.is_cuda() && W.dtype == DType::f32) return detail::linear_wgmma_split_bytes(W, W2);
#endif
  (void)W;
  (void)W2;
  return 0;
}

void linear_split_weight(const DenseView& W, const DenseView& W2, void* out, size_t bytes, const Exec& exec) {
  check_matrix(W, "W");
  check_matrix(W2, "W2 (second weight)");
  TESSERA_CHECK(W2.cols == 0 || (W2.rows == W.rows && W2.dtype == W.dtype && W2.device == W.device),
                "linear_split_weight: W2 is ", W2.rows, " x ", W2.cols, " ", dtype_name(W2.dtype), " on ",
                W2.device.str(), " but W is ", W.rows, " x ", W.cols, " ", dtype_name(W.dtype), " on ", W.device.str());
  const size_t want = linear_split_weight_bytes(W, W2);
  TESSERA_CHECK(want > 0, "linear_split_weight: no variant reads a split of a ", dtype_name(W.dtype), " weight on ",
                W.device.str());
  TESSERA_CHECK(bytes == want, "linear_split_weight: `out` has ", bytes, " bytes, a ", W.rows, " x ", W.cols,
                " weight's split needs ", want);
  TESSERA_CHECK(exec.device == W.device, "linear_split_weight: exec on ", exec.device.str(), " but W is on ",
                W.device.str());
#ifdef TESSERA_WITH_WGMMA
  detail::linear_wgmma_split_weight(W, W2, out, exec);
#endif
}

tune::Registry<LinearArgs>& linear_registry() {
  static tune::Registry<LinearArgs> r = make_registry();
  return r;
}

bool linear_supported(const LinearArgs& a, const Exec& exec) {
  return !linear_registry().eligible(a, exec.device).empty();
}

void linear(const LinearArgs& a, const Exec& exec, const std::string& variant) {
  validate_linear(a);
  TESSERA_CHECK(exec.device == a.Y.device, "linear: exec on ", exec.device.str(), " but Y is on ",
                a.Y.device.str());
  const tune::Choice c = tune::choose(linear_registry(), key_of(a, exec), a, exec, variant);
  if (a.Y.rows * a.Y.cols == 0) return;
  linear_registry().get(c.variant).run(a, exec);
}

}  // namespace tessera::ops

namespace tessera::ops {

void validate_linear_weight_grad(const LinearGradArgs& a) {
  check_matrix(a.DY, "dY");
  check_matrix(a.X, "X");
  check_matrix(a.DW, "dW");
  TESSERA_CHECK(a.DY.rows == a.X.rows, "linear_weight_grad: dY has ", a.DY.rows, " rows but X has ", a.X.rows);
  TESSERA_CHECK(a.DW.rows == a.DY.cols && a.DW.cols == a.X.cols, "linear_weight_grad: dW is ", a.DW.rows, " x ",
                a.DW.cols, " but dY^T X is ", a.DY.cols, " x ", a.X.cols);
  TESSERA_CHECK(a.DY.dtype == a.DW.dtype && a.X.dtype == a.DW.dtype, "linear_weight_grad: dY is ",
                dtype_name(a.DY.dtype), ", X is ", dtype_name(a.X.dtype), ", dW is ", dtype_name(a.DW.dtype),
                " (one dtype for all)");
  TESSERA_CHECK(a.DY.device == a.DW.device && a.X.device == a.DW.device, "linear_weight_grad: dY on ",
                a.DY.device.str(), ", X on ", a.X.device.str(), ", dW on ", a.DW.device.str());
  TESSERA_CHECK(!overlaps(a.DW, a.DY) && !overlaps(a.DW, a.X), "linear_weight_grad: dW overlaps an input");
}

tune::Registry<LinearGradArgs>& linear_weight_grad_registry() {
  static tune::Registry<LinearGradArgs> r = make_weight_grad_registry();
  return r;
}

bool linear_weight_grad_supported(const LinearGradArgs& a, const Exec& exec) {
  return !linear_weight_grad_registry().eligible(a, exec.device).empty();
}

void linear_weight_grad(const LinearGradArgs& a, const Exec& exec, const std::string& variant) {
  validate_linear_weight_grad(a);
  TESSERA_CHECK(exec.device == a.DW.device, "linear_weight_grad: exec on ", exec.device.str(), " but dW is on ",
                a.DW.device.str());
  const tune::Choice c = tune::choose(linear_weight_grad_registry(), grad_key_of(a, exec), a, exec, variant);
  if (a.DW.rows * a.DW.cols == 0 && (a.db == nullptr || a.DW.rows == 0)) return;
  linear_weight_grad_registry().get(c.variant).run(a, exec);
}

}  // namespace tessera::ops
