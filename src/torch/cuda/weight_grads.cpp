// dw = dy^T x with db = column sums of dy in the epilogue: one cuBLASLt matmul (weight_grads.hpp).
//
// Column-major view (cuBLASLt's): x [rows, in] with row stride ldx is X = [in, rows] (ld ldx), dy
// [rows, out] is Y = [out, rows] (ld ldy), and dw [out, in] row-major is D = [in, out] (ld in).
// D = X Y^T, so the GEMM's k is the rows, and BGRADB sums op(B) = Y^T over k: db[o] = sum_r dy[r, o].
//
// The heuristic's answer is kept per (device, sizes, strides, operand alignment): asking costs host
// time on every call otherwise, and a training loop repeats one shape. The cache is small and
// bounded (cleared when full); shapes it has no algorithm for are kept too, as "fall back".
#include <c10/cuda/CUDAStream.h>
#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "../weight_grads.hpp"

namespace tessera::pt {

namespace {

constexpr size_t kMaxWorkspace = size_t(32) << 20;
constexpr size_t kMaxPlans = 256;

struct Plan {
  bool ok = false;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

// Owns the descriptors of one call.
struct Descs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descs() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

uint32_t alignment_of(const void* p) {  // the largest power of two dividing the address, at most 256
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 4 && v % a != 0) a /= 2;
  return a;
}

bool ok(cublasStatus_t st) { return st == CUBLAS_STATUS_SUCCESS; }

// One cuBLASLt handle per device, made on first use and kept (torch 1.13 has no shared one to
// borrow); null when it cannot be made. Leaked at exit, when the CUDA context may be gone.
cublasLtHandle_t lt_handle(int device) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cublasLtHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find(device);
  if (it != handles->end()) return it->second;
  cublasLtHandle_t h = nullptr;
  if (!ok(cublasLtCreate(&h))) h = nullptr;
  (*handles)[device] = h;
  return h;
}

}  // namespace

bool weight_grads_cuda(const at::Tensor& dy, const at::Tensor& x, at::Tensor& dw, at::Tensor& db) {
  const int64_t rows = x.size(0), in = x.size(1), out = dy.size(1);
  if (rows == 0 || in == 0 || out == 0 || dy.stride(1) != 1 || x.stride(1) != 1 || dy.device() != x.device())
    return false;
  const int64_t ldx = rows > 1 ? x.stride(0) : in, ldy = rows > 1 ? dy.stride(0) : out;
  if (ldx < in || ldy < out) return false;
  const uint32_t align_x = alignment_of(x.data_ptr()), align_y = alignment_of(dy.data_ptr());
  const int device = int(x.device().index());
  const cublasLtHandle_t lt = lt_handle(device);
  if (!lt) return false;

  Descs s;
  const cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_T;
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BGRADB;
  if (!ok(cublasLtMatmulDescCreate(&s.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
      !ok(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta))) ||
      !ok(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb))) ||
      !ok(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi))) ||
      !ok(cublasLtMatrixLayoutCreate(&s.a, CUDA_R_32F, uint64_t(in), uint64_t(rows), ldx)) ||
      !ok(cublasLtMatrixLayoutCreate(&s.b, CUDA_R_32F, uint64_t(out), uint64_t(rows), ldy)) ||
      !ok(cublasLtMatrixLayoutCreate(&s.d, CUDA_R_32F, uint64_t(in), uint64_t(out), in)))
    return false;

  static std::mutex mu;
  static std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, uint32_t, uint32_t>, Plan> plans;
  const auto key = std::make_tuple(device, rows, in, out, ldx, ldy, align_x, align_y);
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = plans.find(key);
    if (it != plans.end()) {
      plan = it->second;
    } else {
      const uint64_t ws = kMaxWorkspace;
      cublasLtMatmulHeuristicResult_t result{};
      int found = 0;
      if (ok(cublasLtMatmulPreferenceCreate(&s.pref)) &&
          ok(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws))) &&
          ok(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_x,
                                                  sizeof(align_x))) &&
          ok(cublasLtMatmulPreferenceSetAttribute(s.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_y,
                                                  sizeof(align_y))) &&
          ok(cublasLtMatmulAlgoGetHeuristic(lt, s.op, s.a, s.b, s.d, s.d, s.pref, 1,
                                            &result, &found)) &&
          found > 0) {
        plan.ok = true;
        plan.algo = result.algo;
        plan.workspace = result.workspaceSize;
      }
      if (plans.size() >= kMaxPlans) plans.clear();
      plans[key] = plan;
    }
  }
  if (!plan.ok) return false;

  at::Tensor w = at::empty({out, in}, x.options());
  at::Tensor b = at::empty({out}, x.options());
  void* bias = b.data_ptr();
  if (!ok(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)))) return false;
  at::Tensor workspace = plan.workspace ? at::empty({int64_t(plan.workspace)}, x.options().dtype(at::kByte)) : at::Tensor();
  const float one = 1.f, zero = 0.f;
  const cublasStatus_t st = cublasLtMatmul(
      lt, s.op, &one, x.data_ptr(), s.a, dy.data_ptr(), s.b, &zero, w.data_ptr(), s.d,
      w.data_ptr(), s.d, &plan.algo, plan.workspace ? workspace.data_ptr() : nullptr, plan.workspace,
      c10::cuda::getCurrentCUDAStream(device).stream());
  if (!ok(st)) return false;
  dw = w;
  db = b;
  return true;
}

}  // namespace tessera::pt
