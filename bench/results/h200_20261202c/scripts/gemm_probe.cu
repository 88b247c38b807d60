// Probe: does any cuBLASLt algorithm beat cuBLAS's default SGEMM on the layers' tall-skinny shapes?
// Row-major Y[N,O] = X[N,I] * W[O,I]^T  ==  column-major Y'(O x N) = W'^T (O x I) * X' (I x N).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { auto s_ = (x); if ((int)s_ != 0) { printf("error %d at %s:%d\n", (int)s_, __FILE__, __LINE__); exit(1);} } while (0)

template <class F> float median_ms(F f, int reps = 15) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  f(); f(); cudaDeviceSynchronize();
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

struct Shape { const char* name; int m, n, k; cublasOperation_t ta, tb; };

int main() {
  cublasHandle_t h; CK(cublasCreate(&h));
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt));
  size_t ws_bytes = 64 << 20; void* ws; CK(cudaMalloc(&ws, ws_bytes));
  const int N = 1 << 20;
  // (m, n, k) column-major; forward: m = O, n = N, k = I, A = W' (k x m, T), B = X' (k x n, N)
  // dX: X'grad (I x N) = W' (I x O) * dY' (O x N): m = I, n = N, k = O, A N, B N
  // dW: W'grad (I x O) = X' (I x N) * dY'^T (N x O): m = I, n = O, k = N, A N, B T
  std::vector<Shape> shapes = {
    {"gcn fwd 256->256", 256, N, 256, CUBLAS_OP_T, CUBLAS_OP_N},
    {"gcn fwd 64->64", 64, N, 64, CUBLAS_OP_T, CUBLAS_OP_N},
    {"gcn fwd 512->512", 512, N, 512, CUBLAS_OP_T, CUBLAS_OP_N},
    {"gcn dX 256", 256, N, 256, CUBLAS_OP_N, CUBLAS_OP_N},
    {"gcn dW 256", 256, 256, N, CUBLAS_OP_N, CUBLAS_OP_T},
    {"tr fwd 128->1024 (4x64)", 1024, N, 128, CUBLAS_OP_T, CUBLAS_OP_N},
    {"tr fwd 128->4096 (8x128)", 4096, N, 128, CUBLAS_OP_T, CUBLAS_OP_N},
    {"tr fwd 128->2048 (2x256)", 2048, N, 128, CUBLAS_OP_T, CUBLAS_OP_N},
    {"tr dX 1024->128", 128, N, 1024, CUBLAS_OP_N, CUBLAS_OP_N},
    {"tr dW 4x64", 128, 1024, N, CUBLAS_OP_N, CUBLAS_OP_T},
  };
  size_t maxel = (size_t)N * 4096;
  float *A, *B, *C; CK(cudaMalloc(&A, maxel * 4)); CK(cudaMalloc(&B, (size_t)N * 1024 * 4)); CK(cudaMalloc(&C, maxel * 4));
  cudaMemset(A, 0, maxel * 4); cudaMemset(B, 0, (size_t)N * 1024 * 4);
  const float one = 1.f, zero = 0.f;
  for (auto& s : shapes) {
    int lda = s.ta == CUBLAS_OP_N ? s.m : s.k, ldb = s.tb == CUBLAS_OP_N ? s.k : s.n, ldc = s.m;
    double flop = 2.0 * s.m * (double)s.n * s.k;
    float t0 = median_ms([&] { cublasSgemm(h, s.ta, s.tb, s.m, s.n, s.k, &one, A, lda, B, ldb, &zero, C, ldc); });
    printf("%-28s cublasSgemm %8.3f ms %6.1f TFLOP/s\n", s.name, t0, flop / t0 / 1e9);
    cublasLtMatmulDesc_t d; CK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &s.ta, sizeof(s.ta)));
    CK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &s.tb, sizeof(s.tb)));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, s.ta == CUBLAS_OP_N ? s.m : s.k, s.ta == CUBLAS_OP_N ? s.k : s.m, lda));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, s.tb == CUBLAS_OP_N ? s.k : s.n, s.tb == CUBLAS_OP_N ? s.n : s.k, ldb));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, s.m, s.n, ldc));
    cublasLtMatmulPreference_t p; CK(cublasLtMatmulPreferenceCreate(&p));
    CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
    cublasLtMatmulHeuristicResult_t res[32]; int got = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 32, res, &got));
    float best = 1e30f; int bi = -1;
    for (int i = 0; i < got; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      float t = median_ms([&] { cublasLtMatmul(lt, d, &one, A, la, B, lb, &zero, C, lc, C, lc, &res[i].algo, ws, ws_bytes, 0); }, 7);
      if (cudaGetLastError() != cudaSuccess) continue;
      int tile = 0, stages = 0, splitk = 0; size_t w;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(stages), &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof(splitk), &w);
      printf("    lt[%2d] tile %3d stages %3d splitk %2d ws %8zu: %8.3f ms %6.1f TFLOP/s\n", i, tile, stages, splitk, res[i].workspaceSize, t, flop / t / 1e9);
      if (t < best) { best = t; bi = i; }
    }
    printf("%-28s best lt[%d] %8.3f ms (%.2fx of cublasSgemm)\n", s.name, bi, best, t0 / best);
    cublasLtMatmulPreferenceDestroy(p); cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc); cublasLtMatmulDescDestroy(d);
  }
  return 0;
}
