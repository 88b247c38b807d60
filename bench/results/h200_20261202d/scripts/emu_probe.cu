// Probe: on the H200 (sm_90), does cuBLAS's FP32 emulation (CUBLAS_COMPUTE_32F_EMULATED_16BFX9,
// strategy EAGER) or TF32 run the layers' fp32 GEMM shapes faster than native SGEMM, and how far
// are their results from a double reference (max |err| / max |ref| over sampled outputs)?
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#define CK(x) do { auto s_ = (x); if ((int)s_ != 0) { printf("error %d at %s:%d\n", (int)s_, __FILE__, __LINE__); return 1;} } while (0)
template <class F> float median_ms(F f, int reps = 11) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  f(); f(); cudaDeviceSynchronize();
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  cublasHandle_t h; CK(cublasCreate(&h));
  int ver; cublasGetVersion(h, &ver); printf("cublas version %d\n", ver);
  const int N = 1 << 20;
  struct S { const char* name; int o, i; };
  std::vector<S> shapes = {{"gcn 256->256", 256, 256}, {"gcn 512->512", 512, 512}, {"gcn 64->64", 64, 64},
                           {"tr 128->1024", 1024, 128}, {"tr 128->4096", 4096, 128}};
  std::mt19937 rng(1); std::normal_distribution<float> nd;
  std::vector<float> hx((size_t)N * 512), hw(4096 * 512);
  for (auto& v : hx) v = nd(rng);
  for (auto& v : hw) v = nd(rng) * 0.05f;
  float *X, *W, *Y; CK(cudaMalloc(&X, hx.size() * 4)); CK(cudaMalloc(&W, hw.size() * 4)); CK(cudaMalloc(&Y, (size_t)N * 4096 * 4));
  CK(cudaMemcpy(X, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(W, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
  const float one = 1.f, zero = 0.f;
  struct M { const char* name; cublasComputeType_t ct; };
  std::vector<M> modes = {{"native fp32", CUBLAS_COMPUTE_32F}, {"emulated bf16x9", CUBLAS_COMPUTE_32F_EMULATED_16BFX9},
                          {"tf32", CUBLAS_COMPUTE_32F_FAST_TF32}, {"pedantic fp32", CUBLAS_COMPUTE_32F_PEDANTIC}};
  CK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
  for (auto& s : shapes) {
    double flop = 2.0 * N * s.o * (double)s.i;
    for (auto& m : modes) {
      // row-major Y[N,o] = X[N,i] W[o,i]^T  ==  col-major Y'(o x N) = W'^T * X'
      auto run = [&] { return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.o, N, s.i, &one, W, CUDA_R_32F, s.i, X, CUDA_R_32F, s.i, &zero, Y, CUDA_R_32F, s.o, m.ct, CUBLAS_GEMM_DEFAULT); };
      int st = run();
      if (st) { printf("%-14s %-16s status %d\n", s.name, m.name, st); continue; }
      float t = median_ms([&] { run(); });
      std::vector<float> hy((size_t)2048 * s.o);
      cudaMemcpy(hy.data(), Y, hy.size() * 4, cudaMemcpyDeviceToHost);
      double maxerr = 0, maxref = 0;
      for (int r = 0; r < 2048; ++r) for (int c = 0; c < s.o; ++c) {
        double ref = 0; for (int k = 0; k < s.i; ++k) ref += (double)hx[(size_t)r * s.i + k] * hw[(size_t)c * s.i + k];
        maxerr = std::max(maxerr, std::fabs(ref - hy[(size_t)r * s.o + c])); maxref = std::max(maxref, std::fabs(ref));
      }
      printf("%-14s %-16s %8.3f ms %6.1f TFLOP/s  rel err %.2e\n", s.name, m.name, t, flop / t / 1e9, maxerr / maxref);
    }
  }
  return 0;
}
