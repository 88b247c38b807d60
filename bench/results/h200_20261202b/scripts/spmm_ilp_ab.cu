// Experiment (session 2026-12-02 b): the CSR row kernel's gather batching, variants side by side in
// one binary. call1.sh generates one copy of src/cuda/ops/spmm_kernels.cuh per variant, each in
// its own namespace (kernels_a: the committed kernel, kIlp 4 and a one-by-one remainder;
// kernels_p4 / p6 / p8: the predicated last batch with kIlp 4 / 6 / 8), and compiles this file
// against them. Per graph and width: each variant's csr_rows_kernel (the row pass alone, bias
// fused, no long rows), median of 20 launches, rounds alternated; outputs compared with variant a.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "v_a.cuh"
#include "v_p4.cuh"
#include "v_p6.cuh"
#include "v_p8.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

namespace tc = tessera::ops::cuda;

struct Graph { const char* name; int64_t rows; std::vector<int> rowptr, col; std::vector<float> w; };

Graph grid(int side) {  // 4-neighbour grid with self-loops, weights 1/deg (rows: 3-5 edges)
  Graph g{"grid", int64_t(side) * side, {0}, {}, {}};
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      const int i = r * side + c;
      int nb[5], k = 0;
      if (r > 0) nb[k++] = i - side;
      if (c > 0) nb[k++] = i - 1;
      nb[k++] = i;
      if (c + 1 < side) nb[k++] = i + 1;
      if (r + 1 < side) nb[k++] = i + side;
      for (int j = 0; j < k; ++j) g.col.push_back(nb[j]), g.w.push_back(1.0f / k);
      g.rowptr.push_back(int(g.col.size()));
    }
  return g;
}

Graph uniform(int64_t n, int max_deg) {  // degrees uniform in [0, max_deg], sources uniform
  Graph g{"uniform", n, {0}, {}, {}};
  std::mt19937_64 rng(7);
  for (int64_t i = 0; i < n; ++i) {
    const int d = int(rng() % uint64_t(max_deg + 1));
    for (int j = 0; j < d; ++j) g.col.push_back(int(rng() % uint64_t(n))), g.w.push_back(0.1f);
    g.rowptr.push_back(int(g.col.size()));
  }
  return g;
}

template <class P, class K>
float time_ms(K kernel, const P& p, int64_t rows, int reps) {
  const unsigned blocks = unsigned((rows * 32 + 255) / 256);
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = 0; i < reps + 3; ++i) {
    CK(cudaEventRecord(a));
    kernel<<<blocks, 256>>>(p);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <int NV>
void run_width(const Graph& g, int64_t F) {
  const int64_t n = g.rows, nnz = int64_t(g.col.size());
  int *rp, *cl; float *w, *X, *Y, *bias;
  CK(cudaMalloc(&rp, (n + 1) * 4)); CK(cudaMalloc(&cl, nnz * 4)); CK(cudaMalloc(&w, nnz * 4));
  CK(cudaMalloc(&X, n * F * 4)); CK(cudaMalloc(&bias, F * 4));
  CK(cudaMemcpy(rp, g.rowptr.data(), (n + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(cl, g.col.data(), nnz * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, g.w.data(), nnz * 4, cudaMemcpyHostToDevice));
  std::vector<float> hx(static_cast<size_t>(n * F)), hb(static_cast<size_t>(F));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : hx) v = u(rng);
  for (auto& v : hb) v = u(rng);
  CK(cudaMemcpy(X, hx.data(), n * F * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(bias, hb.data(), F * 4, cudaMemcpyHostToDevice));
  const char* names[4] = {"a (kIlp 4, serial rest)", "p4 (kIlp 4, predicated)", "p6 (kIlp 6, predicated)", "p8 (kIlp 8, predicated)"};
  std::vector<float> ref(static_cast<size_t>(n * F)), out(static_cast<size_t>(n * F));
  float* Ys[4];
  std::vector<float> ms[4];
  for (int v = 0; v < 4; ++v) { CK(cudaMalloc(&Ys[v], n * F * 4)); CK(cudaMemset(Ys[v], 0, n * F * 4)); }
#define PARAMS(NS, Yp) tc::NS::RowsParams<float, int>{n, F, rp, cl, w, nullptr, X, F, Yp, F, INT64_MAX, nullptr, 0, nullptr, bias}
  for (int round = 0; round < 3; ++round) {
    ms[0].push_back(time_ms(tc::kernels_a::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_a, Ys[0]), n, 20));
    ms[1].push_back(time_ms(tc::kernels_p4::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_p4, Ys[1]), n, 20));
    ms[2].push_back(time_ms(tc::kernels_p6::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_p6, Ys[2]), n, 20));
    ms[3].push_back(time_ms(tc::kernels_p8::csr_rows_kernel<float, int, 4, NV, 32, false>, PARAMS(kernels_p8, Ys[3]), n, 20));
  }
  const double bytes = double(n + 1) * 4 + double(nnz) * 8 + double(n) * F * 4 * 2;
  CK(cudaMemcpy(ref.data(), Ys[0], n * F * 4, cudaMemcpyDeviceToHost));
  for (int v = 0; v < 4; ++v) {
    CK(cudaMemcpy(out.data(), Ys[v], n * F * 4, cudaMemcpyDeviceToHost));
    double diff = 0;
    for (size_t i = 0; i < out.size(); ++i) diff = std::max(diff, double(std::abs(out[i] - ref[i])));
    std::sort(ms[v].begin(), ms[v].end());
    printf("  %-8s F=%4lld %-26s median of rounds %.4f ms (rounds %.4f %.4f %.4f)  %.0f GB/s = %.0f%% of 4.2 TB/s  max|diff| vs a %.3g\n",
           g.name, (long long)F, names[v], ms[v][1], ms[v][0], ms[v][1], ms[v][2], bytes / ms[v][1] / 1e6,
           100.0 * bytes / ms[v][1] / 1e6 / 4200.0, diff);
  }
  for (int v = 0; v < 4; ++v) CK(cudaFree(Ys[v]));
  CK(cudaFree(rp)); CK(cudaFree(cl)); CK(cudaFree(w)); CK(cudaFree(X)); CK(cudaFree(bias));
}

int main() {
  for (const Graph& g : {grid(1024), uniform(int64_t(1) << 20, 32)}) {
    printf("%s: %lld rows, %zu edges\n", g.name, (long long)g.rows, g.col.size());
    run_width<1>(g, 64 * 2);   // G = 32 lanes x 4 = 128 wide: NV 1
    run_width<2>(g, 256);
    run_width<4>(g, 512);
  }
  return 0;
}
