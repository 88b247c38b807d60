// The locality-study kernels (src/cuda/study) against a CPU double-precision sum, on nasty graphs
// (empty rows, one huge row, duplicates) in both mappings and both load widths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/testing.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"

#ifdef TESSERA_WITH_CUDA
#include "cuda/study/locality.hpp"
#include "tessera/core/cuda_check.hpp"
#endif

namespace tessera {
namespace {

TEST(LocalityStudy, SupportsNamesTheShapeRules) {
#ifdef TESSERA_WITH_CUDA
  namespace st = cuda::study;
  EXPECT_TRUE(st::supports(33, st::Mapping::feature_parallel, st::Load::scalar));
  EXPECT_FALSE(st::supports(34, st::Mapping::feature_parallel, st::Load::vec16));
  EXPECT_FALSE(st::supports(36, st::Mapping::neighbour_parallel, st::Load::vec16));
  EXPECT_TRUE(st::supports(40, st::Mapping::neighbour_parallel, st::Load::vec16));
  EXPECT_FALSE(st::supports(0, st::Mapping::feature_parallel, st::Load::scalar));
  // A host graph is rejected before any launch, naming the device.
  const Csr<int32_t> g = build_csr(testing::nasty_coo<int32_t>({}, testing::seed()));
  try {
    st::aggregate_sum(g.view(), nullptr, nullptr, 8, st::Mapping::feature_parallel, st::Load::scalar, Exec{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA device"), std::string::npos) << e.what();
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(LocalityStudy, CudaMappingsMatchCpuSum) {
  TESSERA_REQUIRE_CUDA();
#ifdef TESSERA_WITH_CUDA
  namespace st = cuda::study;
  const uint64_t seed = testing::seed();
  testing::NastyOptions o;
  o.rows = 1237;
  o.cols = 911;
  o.avg_degree = 9;
  o.huge_row_degree = 3000;  // longer than a warp's stride many times over
  o.weighted = false;
  const Csr<int32_t> g = build_csr(testing::nasty_coo<int32_t>(o, seed), BuildOptions{false, false});
  cudaStream_t stream;
  TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const Exec exec{Device{DeviceKind::cuda, 0}, stream};
  int32_t *rowptr = nullptr, *col = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&rowptr, g.rowptr.size() * 4));
  TESSERA_CUDA_CHECK(cudaMalloc(&col, std::max<size_t>(1, g.col.size()) * 4));
  TESSERA_CUDA_CHECK(cudaMemcpy(rowptr, g.rowptr.data(), g.rowptr.size() * 4, cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(col, g.col.data(), g.col.size() * 4, cudaMemcpyHostToDevice));
  CsrView<int32_t> d{g.rows, g.cols, g.nnz(), rowptr, col, nullptr, exec.device, 0};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t F : {8, 12, 40, 96, 520}) {
    std::vector<float> X(size_t(g.cols * F));
    for (auto& v : X) v = u(rng);
    std::vector<double> ref(size_t(g.rows * F), 0.0);
    for (int64_t i = 0; i < g.rows; ++i)
      for (int64_t k = g.rowptr[size_t(i)]; k < g.rowptr[size_t(i + 1)]; ++k)
        for (int64_t f = 0; f < F; ++f) ref[size_t(i * F + f)] += X[size_t(g.col[size_t(k)] * F + f)];
    float *dX = nullptr, *dY = nullptr;
    TESSERA_CUDA_CHECK(cudaMalloc(&dX, X.size() * 4));
    TESSERA_CUDA_CHECK(cudaMalloc(&dY, ref.size() * 4));
    TESSERA_CUDA_CHECK(cudaMemcpy(dX, X.data(), X.size() * 4, cudaMemcpyHostToDevice));
    for (auto m : {st::Mapping::feature_parallel, st::Mapping::neighbour_parallel})
      for (auto l : {st::Load::scalar, st::Load::vec16}) {
        if (!st::supports(F, m, l)) continue;
        SCOPED_TRACE(std::string(st::mapping_name(m)) + "/" + st::load_name(l) + " F=" + std::to_string(F) +
                     " seed " + std::to_string(seed));
        TESSERA_CUDA_CHECK(cudaMemsetAsync(dY, 0xff, ref.size() * 4, stream));  // NaN: unwritten shows
        st::aggregate_sum(d, dX, dY, F, m, l, exec);
        std::vector<float> Y(ref.size());
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(Y.data(), dY, Y.size() * 4, cudaMemcpyDeviceToHost, stream));
        TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
        for (size_t k = 0; k < Y.size(); ++k) {
          const int64_t i = int64_t(k) / F;
          const double deg = double(g.rowptr[size_t(i + 1)] - g.rowptr[size_t(i)]);
          ASSERT_NEAR(Y[k], ref[k], 1e-5 * (1 + deg)) << "row " << i << " feature " << int64_t(k) % F;
        }
      }
    cudaFree(dX);
    cudaFree(dY);
  }
  cudaFree(rowptr);
  cudaFree(col);
  TESSERA_CUDA_CHECK(cudaStreamDestroy(stream));
#endif
}

}  // namespace
}  // namespace tessera
