// Probe: fp32 (CUBLAS_COMPUTE_32F, no TF32) Y[M,N] = X[M,K] W[N,K]^T (+ bias) on the algorithms
// cuBLASLt's heuristic offers, against cublasSgemm's default; also the two backward shapes.
//   nvcc -O2 -std=c++17 gemm_probe.cu -lcublasLt -lcublas -o gemm_probe && ./gemm_probe
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) do { auto e = (x); if (int(e) != 0) { std::printf("error %d at %s:%d\n", int(e), __FILE__, __LINE__); std::exit(1); } } while (0)

struct Shape { const char* name; int m, n, k; cublasOperation_t ta, tb; bool bias; };

template <class F> float time_ms(F f, int reps = 9) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  f(); f(); cudaDeviceSynchronize();
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  // Column-major cuBLAS view of the row-major torch GEMMs (M nodes):
  //  fwd  Y = X W^T (+b):  D[n_out x M] = W^T(T) * X^T(N)        m=out, n=M, k=in, TN
  //  dX   = dY W:          D[in x M]    = W(N)   * dY^T(N)       m=in,  n=M, k=out, NN
  //  dW   = dY^T X:        D[in x out]  = X^T(N) * dY(T)         m=in,  n=out, k=M, NT
  const int M = 1 << 20;
  std::vector<Shape> shapes = {
      {"fwd 128->1024 +b (grid 8x128 q/k/v/skip)", 1024, M, 128, CUBLAS_OP_T, CUBLAS_OP_N, true},
      {"fwd 128->256 +b (4x64 q/k/v/skip)", 256, M, 128, CUBLAS_OP_T, CUBLAS_OP_N, true},
      {"fwd 256->256 (GCN lin, width 256)", 256, M, 256, CUBLAS_OP_T, CUBLAS_OP_N, false},
      {"fwd 512->512 (GCN lin, width 512)", 512, M, 512, CUBLAS_OP_T, CUBLAS_OP_N, false},
      {"fwd NN 128->1024 (W^T pre-transposed)", 1024, M, 128, CUBLAS_OP_N, CUBLAS_OP_N, true},
      {"fwd NN 128->256 (W^T pre-transposed)", 256, M, 128, CUBLAS_OP_N, CUBLAS_OP_N, true},
      {"fwd NN 256->256 (W^T pre-transposed)", 256, M, 256, CUBLAS_OP_N, CUBLAS_OP_N, false},
      {"dX 1024->128 (grid 8x128)", 128, M, 1024, CUBLAS_OP_N, CUBLAS_OP_N, false},
      {"dW 1024x128 over M (grid 8x128)", 128, 1024, M, CUBLAS_OP_N, CUBLAS_OP_T, false},
  };
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt));
  cublasHandle_t h; CK(cublasCreate(&h));
  size_t ws_bytes = 64 << 20; void* ws; CK(cudaMalloc(&ws, ws_bytes));
  for (const Shape& s : shapes) {
    const int lda = s.ta == CUBLAS_OP_T ? s.k : s.m, ldb = s.tb == CUBLAS_OP_N ? s.k : s.n, ldd = s.m;
    const size_t a_n = size_t(s.m) * s.k, b_n = size_t(s.k) * s.n, d_n = size_t(s.m) * s.n;
    float *A, *B, *D, *bias;
    CK(cudaMalloc(&A, a_n * 4)); CK(cudaMalloc(&B, b_n * 4)); CK(cudaMalloc(&D, d_n * 4)); CK(cudaMalloc(&bias, s.m * 4));
    cudaMemset(A, 0x3c, a_n * 4); cudaMemset(B, 0x3c, b_n * 4); cudaMemset(bias, 0x3c, s.m * 4);  // ~0.0115: nonzero operands
    const double gflop = 2.0 * s.m * double(s.n) * s.k / 1e9;
    const float one = 1.f, zero = 0.f;
    float t_sgemm = time_ms([&] { cublasSgemm(h, s.ta, s.tb, s.m, s.n, s.k, &one, A, lda, B, ldb, &zero, D, ldd); });
    std::printf("== %s: m=%d n=%d k=%d, %.1f GFLOP\n   cublasSgemm default: %.3f ms %.1f TFLOP/s\n", s.name, s.m, s.n, s.k,
                gflop, t_sgemm, gflop / t_sgemm);
    cublasLtMatmulDesc_t desc; CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &s.ta, sizeof(s.ta)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &s.tb, sizeof(s.tb)));
    if (s.bias) {
      cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
      CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
      CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
    cublasLtMatrixLayout_t la, lb, ld;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, s.ta == CUBLAS_OP_T ? s.k : s.m, s.ta == CUBLAS_OP_T ? s.m : s.k, lda));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, s.tb == CUBLAS_OP_N ? s.k : s.n, s.tb == CUBLAS_OP_N ? s.n : s.k, ldb));
    CK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, s.m, s.n, ldd));
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
    cublasLtMatmulHeuristicResult_t res[32]; int count = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 32, res, &count));
    for (int i = 0; i < count; ++i) {
      int id = 0, tile = 0, splitk = 0, stages = 0; size_t w = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof(splitk), &w);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(stages), &w);
      float t = time_ms([&] {
        cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, D, ld, D, ld, &res[i].algo, ws, ws_bytes, 0);
      });
      std::printf("   lt heuristic #%d: algo %d tile %d splitk %d stages %d ws %zu: %.3f ms %.1f TFLOP/s\n", i, id, tile,
                  splitk, stages, res[i].workspaceSize, t, gflop / t);
    }
    if (s.k <= 256 && s.n == M) {  // every (algo, tile, stages) the library has for this problem, split-k 1
      int ids[64]; int n_ids = 0;
      CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 64, ids, &n_ids));
      float best = 1e30f; int best_id = -1, best_tile = -1, best_stage = -1, tried = 0;
      for (int a = 0; a < n_ids; ++a) {
        cublasLtMatmulAlgo_t algo;
        if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, ids[a], &algo) != 0) continue;
        size_t sz = 0;
        cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &sz);
        std::vector<int> tiles(sz / sizeof(int) ? sz / sizeof(int) : 1, 0);
        if (sz) cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles.data(), sz, &sz);
        cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, nullptr, 0, &sz);
        std::vector<int> stages(sz / sizeof(int) ? sz / sizeof(int) : 1, 0);
        if (sz) cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages.data(), sz, &sz);
        for (int tile : tiles) for (int st : stages) {
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile));
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &st, sizeof(st));
          int one_split = 1;
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one_split, sizeof(one_split));
          cublasLtMatmulHeuristicResult_t chk;
          if (cublasLtMatmulAlgoCheck(lt, desc, la, lb, ld, ld, &algo, &chk) != 0 || chk.workspaceSize > ws_bytes) continue;
          ++tried;
          float t = time_ms([&] { cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, D, ld, D, ld, &algo, ws, ws_bytes, 0); }, 3);
          if (t < best) { best = t; best_id = ids[a]; best_tile = tile; best_stage = st; }
          if (t < 1.05f * t_sgemm) std::printf("     algo %d tile %d stages %d: %.3f ms %.1f TFLOP/s\n", ids[a], tile, st, t, gflop / t);
        }
      }
      std::printf("   exhaustive (%d configs): best algo %d tile %d stages %d: %.3f ms %.1f TFLOP/s\n", tried, best_id, best_tile,
                  best_stage, best, gflop / best);
    }
    cublasLtMatmulPreferenceDestroy(pref); cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld); cublasLtMatmulDescDestroy(desc);
    cudaFree(A); cudaFree(B); cudaFree(D); cudaFree(bias);
    std::fflush(stdout);
  }
  return 0;
}
