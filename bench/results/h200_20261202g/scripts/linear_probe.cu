// Probe: tf32x3 projection kernel vs cublasSgemm on the layers' shapes; correctness vs double.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "cuda/ops/linear_kernels.cuh"
using namespace tessera::cuda::linear;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

template <int BM, int BN, int WM, int WN, int T>
void run(const float* x, const float* w, const float* b, float* y, int64_t M, int N, int K, cudaStream_t st) {
  Params p; p.x = x; p.w = w; p.bias = b; p.y = y; p.m = M; p.n = N; p.k = K; p.ldx = K; p.ldw = K; p.ldy = N;
  p.n_tiles = (N + BN - 1) / BN;
  const int64_t tiles = ((M + BM - 1) / BM) * p.n_tiles;
  constexpr int sm = smem_bytes<BM, BN>();
  static bool once = false;
  if (!once) { CK(cudaFuncSetAttribute(linear_tf32x3_kernel<BM, BN, WM, WN, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm)); once = true; }
  linear_tf32x3_kernel<BM, BN, WM, WN, T><<<unsigned(tiles), WM * WN * 32, sm, st>>>(p);
}

struct Cfg { const char* name; void (*fn)(const float*, const float*, const float*, float*, int64_t, int, int, cudaStream_t); };
Cfg cfgs[] = {
  {"128x128 w2x4 x3", run<128, 128, 2, 4, 3>},
  {"128x64 w4x2 x3", run<128, 64, 4, 2, 3>},
  {"64x128 w1x4 x3", run<64, 128, 1, 4, 3>},
  {"128x128 w2x4 x1(tf32)", run<128, 128, 2, 4, 1>},
};

int main(int argc, char** argv) {
  const bool check_only = argc > 1;
  cublasHandle_t h; cublasCreate(&h);
  cudaStream_t st = 0;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  // correctness on odd shapes, every config
  struct S { int64_t m; int n, k; };
  std::vector<S> odd = {{1000, 36, 20}, {517, 130, 68}, {33, 2, 4}, {300, 256, 260}, {129, 1024, 128}, {4096, 64, 64}};
  for (auto s : odd) {
    std::vector<float> X(s.m * s.k), W(int64_t(s.n) * s.k), B(s.n), Y(s.m * s.n);
    for (auto& v : X) v = U(rng); for (auto& v : W) v = U(rng); for (auto& v : B) v = U(rng);
    float *dx, *dw, *db, *dy;
    CK(cudaMalloc(&dx, X.size() * 4)); CK(cudaMalloc(&dw, W.size() * 4)); CK(cudaMalloc(&db, B.size() * 4)); CK(cudaMalloc(&dy, Y.size() * 4));
    CK(cudaMemcpy(dx, X.data(), X.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dw, W.data(), W.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    for (auto& c : cfgs) {
      CK(cudaMemset(dy, 0xff, Y.size() * 4));
      c.fn(dx, dw, db, dy, s.m, s.n, s.k, st); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(Y.data(), dy, Y.size() * 4, cudaMemcpyDeviceToHost));
      double worst = 0, fp32_scale = 0;
      for (int64_t i = 0; i < s.m; ++i) for (int j = 0; j < s.n; ++j) {
        double r = B[j], mag = std::fabs(B[j]);
        for (int q = 0; q < s.k; ++q) { r += double(X[i * s.k + q]) * W[int64_t(j) * s.k + q]; mag += std::fabs(double(X[i * s.k + q]) * W[int64_t(j) * s.k + q]); }
        const double e = std::fabs(Y[i * s.n + j] - r) / mag;
        if (!(e <= worst)) worst = std::isnan(e) ? 1e30 : std::max(worst, e);
      }
      printf("check M=%ld N=%d K=%d %-24s max |err|/sum|x w| = %.3g (2^%.1f)\n", (long)s.m, s.n, s.k, c.name, worst, std::log2(worst + 1e-300));
    }
    // cublas for the same metric
    const float one = 1.f, zero = 0.f;
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, dw, s.k, dx, s.k, &zero, dy, s.n); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(Y.data(), dy, Y.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int64_t i = 0; i < s.m; ++i) for (int j = 0; j < s.n; ++j) {
      double r = 0, mag = 0;
      for (int q = 0; q < s.k; ++q) { r += double(X[i * s.k + q]) * W[int64_t(j) * s.k + q]; mag += std::fabs(double(X[i * s.k + q]) * W[int64_t(j) * s.k + q]); }
      worst = std::max(worst, std::fabs(Y[i * s.n + j] - r) / mag);
    }
    printf("check M=%ld N=%d K=%d %-24s max |err|/sum|x w| = %.3g (2^%.1f)\n", (long)s.m, s.n, s.k, "cublasSgemm", worst, std::log2(worst + 1e-300));
    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy);
  }
  if (check_only) return 0;
  // timing on the layers' shapes
  std::vector<S> big = {{1 << 20, 256, 256}, {1 << 20, 64, 64}, {1 << 20, 512, 512}, {1 << 20, 256, 128}, {1 << 20, 1024, 128}, {1 << 20, 1024, 1024}, {65536, 256, 256}};
  for (auto s : big) {
    float *dx, *dw, *dy;
    CK(cudaMalloc(&dx, s.m * s.k * 4)); CK(cudaMalloc(&dw, int64_t(s.n) * s.k * 4)); CK(cudaMalloc(&dy, s.m * s.n * 4));
    std::vector<float> W(int64_t(s.n) * s.k); for (auto& v : W) v = U(rng);
    CK(cudaMemcpy(dw, W.data(), W.size() * 4, cudaMemcpyHostToDevice));
    { std::vector<float> X(s.m * s.k); for (auto& v : X) v = U(rng); CK(cudaMemcpy(dx, X.data(), X.size() * 4, cudaMemcpyHostToDevice)); }
    const double flop = 2.0 * s.m * s.n * s.k;
    auto time = [&](auto f) {
      cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
      for (int i = 0; i < 3; ++i) f();
      std::vector<float> ms;
      for (int r = 0; r < 15; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float t; cudaEventElapsedTime(&t, a, b); ms.push_back(t); }
      std::sort(ms.begin(), ms.end()); CK(cudaGetLastError()); return ms[ms.size() / 2];
    };
    const float one = 1.f, zero = 0.f;
    const float tc = time([&] { cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &one, dw, s.k, dx, s.k, &zero, dy, s.n); });
    printf("time M=%ld N=%d K=%d %-24s %8.3f ms %6.1f TFLOP/s\n", (long)s.m, s.n, s.k, "cublasSgemm", tc, flop / tc / 1e9);
    for (auto& c : cfgs) {
      const float t = time([&] { c.fn(dx, dw, nullptr, dy, s.m, s.n, s.k, st); });
      printf("time M=%ld N=%d K=%d %-24s %8.3f ms %6.1f TFLOP/s  x%.2f vs cublas\n", (long)s.m, s.n, s.k, c.name, t, flop / t / 1e9, tc / t);
    }
    cudaFree(dx); cudaFree(dw); cudaFree(dy);
  }
  return 0;
}
