// WSB tensor-core format and SpMM variants.
//   WsbFormat.*    host builder invariants, the host SpMM over blocks vs plain loops, bad input.
//   MmaFragments.* a CPU emulation of one warp (the kernels' own address functions, ldmatrix.trans
//                  and mma per the PTX ISA fragment tables) against a plain 16x16 product.
//   SpmmWsbCuda.*  cuda.wsb.{f16,bf16,tf32} against double loops, cache behaviour, eligibility.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/ops/mma_fragments.hpp"
#include "support/mma_emulation.hpp"
#include "support/testing.hpp"
#include "tessera/format/wsb.hpp"
#include "tessera/ops/spmm.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>
#endif

using namespace tessera;
using namespace tessera::format;
using namespace tessera::testing;

namespace {

template <class I>
Csr<I> keep_duplicates(const Coo<I>& coo) {
  BuildOptions o;
  o.deduplicate = false;  // duplicates must be summed by the format itself
  return build_csr(coo, o);
}

// Graph cases: nasty (empty rows, duplicates, rows not a multiple of 16), one huge row, edgeless.
template <class I>
std::vector<std::pair<std::string, Csr<I>>> cases(uint64_t s) {
  std::vector<std::pair<std::string, Csr<I>>> out;
  NastyOptions nasty;
  nasty.rows = 1013, nasty.cols = 617;
  out.emplace_back("nasty", keep_duplicates(nasty_coo<I>(nasty, s)));
  NastyOptions huge;
  huge.rows = 45, huge.cols = 20011, huge.huge_row_degree = 30000, huge.weighted = false;
  out.emplace_back("huge_row", keep_duplicates(nasty_coo<I>(huge, s + 1)));
  NastyOptions sparse;
  sparse.rows = 333, sparse.cols = 50, sparse.avg_degree = 0.3, sparse.empty_row_share = 0.6;
  out.emplace_back("sparse", keep_duplicates(nasty_coo<I>(sparse, s + 2)));
  Coo<I> none;
  none.rows = 37, none.cols = 5;
  out.emplace_back("edgeless", keep_duplicates(none));
  return out;
}

template <class T> std::vector<T> random_matrix(std::mt19937_64& rng, int64_t rows, int64_t ld) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> v(size_t(rows * ld));
  for (auto& x : v) x = T(u(rng));
  return v;
}

// Plain loops: Y = A X in double, and the magnitude sum |w| |x| that scales the tolerance.
template <class I, class T>
void loops(const Csr<I>& g, const std::vector<T>& X, int64_t ldx, int64_t F, std::vector<double>& Y,
           std::vector<double>& mag, const float* values = nullptr) {
  Y.assign(size_t(g.rows * F), 0.0);
  mag.assign(size_t(g.rows * F), 0.0);
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t k = g.rowptr[i]; k < int64_t(g.rowptr[i + 1]); ++k) {
      const double w = values ? values[k] : g.weighted() ? g.values[size_t(k)] : 1.0;
      for (int64_t f = 0; f < F; ++f) {
        const double x = double(float(X[size_t(g.col[size_t(k)] * ldx + f)]));
        Y[size_t(i * F + f)] += w * x;
        mag[size_t(i * F + f)] += std::abs(w * x);
      }
    }
}

// |got - want| <= rtol * mag + atol, written so that NaN fails.
template <class T>
void expect_close(const std::vector<T>& got, int64_t ldy, const std::vector<double>& want,
                  const std::vector<double>& mag, int64_t rows, int64_t F, double rtol, const std::string& ctx) {
  int64_t bad = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t f = 0; f < F; ++f) {
      const double g = double(float(got[size_t(i * ldy + f)]));
      const double w = want[size_t(i * F + f)];
      const double tol = rtol * mag[size_t(i * F + f)] + 1e-6;
      if (!(std::abs(g - w) <= tol)) {
        if (++bad <= 5)
          ADD_FAILURE() << ctx << ": Y[" << i << ", " << f << "] = " << g << ", expected " << w << " (tol " << tol << ")";
      }
    }
  EXPECT_EQ(bad, 0) << ctx;
}

template <class I>
void check_invariants(const Csr<I>& g, const std::string& ctx) {
  WsbStats st;
  const WsbPattern<I> p = build_wsb_pattern(g.view(), &st);
  ASSERT_EQ(p.windows(), (g.rows + 15) / 16) << ctx;
  ASSERT_EQ(p.window_ptr.front(), 0) << ctx;
  int64_t distinct_total = 0;
  for (int64_t w = 0; w < p.windows(); ++w) {
    const int64_t b0 = p.window_ptr[size_t(w)], b1 = p.window_ptr[size_t(w) + 1];
    ASSERT_GE(b1, b0) << ctx;
    ASSERT_EQ((b1 - b0) % 2, 0) << ctx << ": window " << w << " has an odd block count";
    // Distinct sources of the window, from the CSR.
    std::vector<int64_t> want;
    for (int64_t r = w * 16; r < std::min<int64_t>(w * 16 + 16, g.rows); ++r)
      for (int64_t k = g.rowptr[r]; k < int64_t(g.rowptr[r + 1]); ++k) want.push_back(g.col[size_t(k)]);
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    distinct_total += int64_t(want.size());
    ASSERT_EQ(b1 - b0, ((int64_t(want.size()) + 7) / 8 + 1) / 2 * 2) << ctx << ": window " << w;
    for (int64_t s = 0; s < (b1 - b0) * 8; ++s) {
      const int64_t c = p.block_cols[size_t(b0 * 8 + s)];
      if (s < int64_t(want.size())) ASSERT_EQ(c, want[size_t(s)]) << ctx << ": window " << w << " slot " << s;
      else ASSERT_EQ(c, -1) << ctx << ": window " << w << " unused slot " << s;
    }
  }
  EXPECT_EQ(st.distinct_cols, distinct_total) << ctx;
  // Every entry's cell names its own row and column, and the occupied cells are exactly those.
  std::vector<char> used(size_t(p.blocks()) * 128, 0);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t k = g.rowptr[r]; k < int64_t(g.rowptr[r + 1]); ++k) {
      const int64_t cell = p.cell[size_t(k)], block = cell / 128, rr = (cell % 128) / 8, cc = cell % 8;
      const int64_t window = int64_t(std::upper_bound(p.window_ptr.begin(), p.window_ptr.end(), block) -
                                     p.window_ptr.begin()) - 1;
      ASSERT_EQ(window, r / 16) << ctx << ": entry " << k << " lies in another window's block";
      ASSERT_EQ(rr, r % 16) << ctx;
      ASSERT_EQ(int64_t(p.block_cols[size_t(block * 8 + cc)]), int64_t(g.col[size_t(k)])) << ctx;
      ASSERT_TRUE(p.occupied(block, int(rr), int(cc))) << ctx;
      used[size_t(cell)] = 1;
    }
  int64_t cells = 0;
  for (int64_t b = 0; b < p.blocks(); ++b)
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c) {
        ASSERT_EQ(p.occupied(b, r, c), bool(used[size_t(b * 128 + r * 8 + c)])) << ctx << ": stray bit";
        cells += p.occupied(b, r, c);
      }
  EXPECT_EQ(st.cells, cells) << ctx;
  EXPECT_EQ(st.blocks, p.blocks()) << ctx;
  EXPECT_GE(st.fill, 0.0);
  EXPECT_LE(st.fill, 1.0);
}

template <class I>
void invariants_all() {
  for (const auto& [what, g] : cases<I>(seed(sizeof(I)))) check_invariants(g, what + " seed=" + std::to_string(seed(sizeof(I))));
}

template <class I, class T>
void host_spmm_case(const Csr<I>& g, int64_t F, double rtol, const std::string& ctx, uint64_t s) {
  std::mt19937_64 rng(s);
  const int64_t ldx = F + 2;  // strided rows
  auto X = random_matrix<float>(rng, g.cols, ldx);
  const Wsb<I, T> w = build_wsb<I, T>(g.view());
  // Duplicates summed: the tiles hold the sum of all weights.
  double tile_sum = 0, weight_sum = 0;
  for (const T& v : w.tiles) tile_sum += double(float(v));
  for (int64_t k = 0; k < g.nnz(); ++k) weight_sum += g.weighted() ? g.values[size_t(k)] : 1.0;
  EXPECT_NEAR(tile_sum, weight_sum, 1e-2 * (1.0 + std::abs(weight_sum)) * (sizeof(T) == 4 ? 1e-3 : 1.0)) << ctx;

  std::vector<float> Y(size_t(g.rows * F), std::nanf(""));
  DenseView xv{X.data(), DType::f32, g.cols, F, ldx, Device{}};
  DenseView yv{Y.data(), DType::f32, g.rows, F, F, Device{}};
  wsb_spmm_host(w, xv, yv);
  std::vector<double> want, mag;
  loops(g, X, ldx, F, want, mag);
  expect_close(Y, F, want, mag, g.rows, F, rtol, ctx);
}

template <class I>
void host_spmm_all() {
  const uint64_t s = seed(11 + sizeof(I));
  for (const auto& [what, g] : cases<I>(s))
    for (int64_t F : {1, 13, 40}) {
      const std::string ctx = what + " F=" + std::to_string(F) + " seed=" + std::to_string(s);
      host_spmm_case<I, float>(g, F, 1e-6, ctx + " tiles=f32", s + uint64_t(F));
      host_spmm_case<I, half_t>(g, F, 1e-3, ctx + " tiles=f16", s + uint64_t(F));
      host_spmm_case<I, bf16_t>(g, F, 8e-3, ctx + " tiles=bf16", s + uint64_t(F));
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace

TEST(WsbFormat, StructureInvariantsInt32) { invariants_all<int32_t>(); }
TEST(WsbFormat, StructureInvariantsInt64) { invariants_all<int64_t>(); }
TEST(WsbFormat, HostSpmmMatchesLoopsInt32) { host_spmm_all<int32_t>(); }
TEST(WsbFormat, HostSpmmMatchesLoopsInt64) { host_spmm_all<int64_t>(); }

TEST(WsbFormat, StatsCountPaddingAndBytes) {
  // Window 0: 9 distinct sources -> 2 blocks; window 1 (rows 16..20): 3 sources -> 1 block + 1 pad.
  Coo<int32_t> coo;
  coo.rows = 21, coo.cols = 12;
  for (int c = 0; c < 9; ++c) coo.dst.push_back(c % 16), coo.src.push_back(c);
  for (int c = 0; c < 3; ++c) coo.dst.push_back(20), coo.src.push_back(c);
  coo.dst.push_back(20), coo.src.push_back(2);  // duplicate
  const Csr<int32_t> g = keep_duplicates(coo);
  const auto w = build_wsb<int32_t, float>(g.view());
  EXPECT_EQ(w.stats.windows, 2);
  EXPECT_EQ(w.stats.blocks, 4);
  EXPECT_EQ(w.stats.pad_blocks, 1);
  EXPECT_EQ(w.stats.distinct_cols, 12);
  EXPECT_EQ(w.stats.cells, 12);
  EXPECT_EQ(w.stats.bytes_tiles, size_t(4 * 128 * 4));
  EXPECT_EQ(w.stats.bytes_cols, size_t(4 * 8 * 4));
  EXPECT_EQ(w.stats.bytes_offsets, size_t(3 * 8));
  EXPECT_EQ(w.stats.bytes_bitmaps, size_t(4 * 16));
  // The duplicate (20, 2) is one cell of weight 2: window 1, block 2, row 4, slot 2.
  EXPECT_EQ(w.tiles[size_t(2 * 128 + 4 * 8 + 2)], 2.0f);
  EXPECT_NE(w.stats.to_json().find("\"pad_blocks\":1"), std::string::npos);
}

TEST(WsbFormat, RejectsBadInput) {
  Csr<int32_t> g;
  g.rows = 3, g.cols = 4;
  g.rowptr = {0, 1, 3, 4};
  g.col = {0, 2, 9, 1};
  try {
    build_wsb_pattern(g.view());
    ADD_FAILURE() << "out-of-range column accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry 2 (row 1): column 9"), std::string::npos) << e.what();
  }
  g.col = {0, 2, 3, 1};
  g.rowptr = {0, 3, 1, 4};
  try {
    build_wsb_pattern(g.view());
    ADD_FAILURE() << "non-monotone offsets accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-monotone offsets at row 1"), std::string::npos) << e.what();
  }
  g.rowptr = {0, 1, 3, 4};
  g.values = {1.0f, std::nanf(""), 1.0f, 1.0f};
  try {
    build_wsb<int32_t, half_t>(g.view());
    ADD_FAILURE() << "NaN weight accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry 1 is NaN"), std::string::npos) << e.what();
  }
}

// ---- warp emulation of the kernels' fragment mappings ----------------------------------------------
namespace {
namespace mma = tessera::cuda::mma;
namespace emu = tessera::testing::mma_emulation;

struct Emu {
  double tile[2][16][8];   // the two blocks of a pair
  double sx[16][64];       // gathered features (k x n)
};
Emu random_emu(uint64_t s) {
  std::mt19937_64 rng(s);
  std::uniform_int_distribution<int> u(-8, 8);  // small integers: products are exact in double
  Emu e{};
  for (auto& b : e.tile)
    for (auto& r : b)
      for (double& v : r) v = u(rng);
  for (auto& r : e.sx)
    for (double& v : r) v = u(rng);
  return e;
}
}  // namespace

TEST(MmaFragments, K16WarpEmulationMatchesProduct) {
  const Emu e = random_emu(seed());
  double Y[16][64] = {};
  for (int q = 0; q < 4; ++q) {  // n-tile pair of the 64-feature slab
    // Registers as the kernel fills them.
    double areg[32][8], breg[2][32][4];
    for (int l = 0; l < 32; ++l)
      for (int r = 0; r < 4; ++r) {
        const mma::TileCell c = mma::wsb_a_k16(l, r);
        areg[l][2 * r] = e.tile[c.block][c.row][c.slot];
        areg[l][2 * r + 1] = e.tile[c.block][c.row][c.slot + 1];
      }
    for (int l = 0; l < 32; ++l)
      for (int m = 0; m < 4; ++m)
        for (int j = 0; j < 2; ++j) {
          const mma::RowCol el = mma::ldsm_trans_elem(l, j);     // (row of matrix m, column)
          const mma::RowCol ad = mma::wsb_ldsm_addr(8 * m + el.row);  // that row's address
          breg[m >> 1][l][2 * (m & 1) + j] = e.sx[ad.row][16 * q + ad.col + el.col];
        }
    // The hardware: operands assembled from the fragments per the PTX tables.
    double A[16][16];
    ASSERT_TRUE(emu::a_operand(areg, A)) << "A fragment does not cover the tile once";
    for (int n = 0; n < 2; ++n) {
      double B[16][8], creg[32][4] = {};
      ASSERT_TRUE(emu::b_operand(breg[n], B)) << "B fragment does not cover the tile once";
      emu::accumulate(A, B, creg);
      // Epilogue as store_acc writes it.
      const int j = 2 * q + n;
      for (int l = 0; l < 32; ++l)
        for (int h = 0; h < 2; ++h) {
          const mma::RowCol rc = mma::acc_c(l, 2 * h);
          Y[rc.row][8 * j + rc.col] = creg[l][2 * h];
          Y[rc.row][8 * j + rc.col + 1] = creg[l][2 * h + 1];
        }
    }
  }
  for (int r = 0; r < 16; ++r)
    for (int f = 0; f < 64; ++f) {
      double want = 0;
      for (int k = 0; k < 16; ++k) want += e.tile[k / 8][r][k % 8] * e.sx[k][f];
      ASSERT_EQ(Y[r][f], want) << "row " << r << " feature " << f;
    }
}

TEST(MmaFragments, Tf32WarpEmulationMatchesProduct) {
  const Emu e = random_emu(seed());
  double Y[16][64] = {};
  for (int j = 0; j < 8; ++j) {
    double creg[32][4] = {};
    for (int blk = 0; blk < 2; ++blk) {
      double A[16][8], B[8][8], hits_a[16][8] = {}, hits_b[8][8] = {};
      for (int l = 0; l < 32; ++l) {
        for (int i = 0; i < 4; ++i) {  // kernel: a[blk][i] = tile[k8_tf32_a(l, i)]
          const mma::RowCol rc = mma::k8_tf32_a(l, i);
          A[rc.row][rc.col] = e.tile[blk][rc.row][rc.col];
          hits_a[rc.row][rc.col] += 1;
        }
        for (int i = 0; i < 2; ++i) {  // kernel: sX[8 blk + b.row][8 j + b.col]
          const mma::RowCol b = mma::k8_tf32_b(l, i);
          B[b.row][b.col] = e.sx[8 * blk + b.row][8 * j + b.col];
          hits_b[b.row][b.col] += 1;
        }
      }
      for (auto& r : hits_a)
        for (double h : r) ASSERT_EQ(h, 1.0);
      for (auto& r : hits_b)
        for (double h : r) ASSERT_EQ(h, 1.0);
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i) {
          const mma::RowCol rc = mma::acc_c(l, i);
          for (int k = 0; k < 8; ++k) creg[l][i] += A[rc.row][k] * B[k][rc.col];
        }
    }
    for (int l = 0; l < 32; ++l)
      for (int h = 0; h < 2; ++h) {
        const mma::RowCol rc = mma::acc_c(l, 2 * h);
        Y[rc.row][8 * j + rc.col] = creg[l][2 * h];
        Y[rc.row][8 * j + rc.col + 1] = creg[l][2 * h + 1];
      }
  }
  for (int r = 0; r < 16; ++r)
    for (int f = 0; f < 64; ++f) {
      double want = 0;
      for (int k = 0; k < 16; ++k) want += e.tile[k / 8][r][k % 8] * e.sx[k][f];
      ASSERT_EQ(Y[r][f], want) << "row " << r << " feature " << f;
    }
}

// ---- GPU ---------------------------------------------------------------------------------------
#ifdef TESSERA_WITH_CUDA
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// A device buffer filled from a host vector, freed at scope exit.
struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  DevBuf(const void* host, size_t n) : bytes(n) {
    if (!n) return;
    EXPECT_EQ(cudaMalloc(&p, n), cudaSuccess);
    if (host) EXPECT_EQ(cudaMemcpyAsync(p, host, n, cudaMemcpyHostToDevice, cudaStreamPerThread), cudaSuccess);
    else EXPECT_EQ(cudaMemsetAsync(p, 0xff, n, cudaStreamPerThread), cudaSuccess);  // NaN poison
    EXPECT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  void to_host(void* host) const {
    EXPECT_EQ(cudaMemcpyAsync(host, p, bytes, cudaMemcpyDeviceToHost, cudaStreamPerThread), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  }
};

template <class I>
struct DevGraph {
  DevBuf rowptr, col, values;
  CsrView<I> v;
  explicit DevGraph(const Csr<I>& g)
      : rowptr(g.rowptr.data(), g.rowptr.size() * sizeof(I)),
        col(g.col.data(), g.col.size() * sizeof(I)),
        values(g.values.data(), g.values.size() * sizeof(float)) {
    v = g.view();
    v.rowptr = static_cast<const I*>(rowptr.p);
    v.col = static_cast<const I*>(col.p);
    v.values = g.weighted() ? static_cast<const float*>(values.p) : nullptr;
    v.device = Device{DeviceKind::cuda, 0};
  }
};

Exec cuda_exec() {
  Exec ex;
  ex.device = Device{DeviceKind::cuda, 0};
  return ex;
}

// per_call: weights passed as SpmmArgs::values (signed, so cancellation is exercised), else the
// graph's own weights (or ones).
template <class I, class T>
void cuda_case(const Csr<I>& g, DType dt, const std::string& variant, int64_t F, int64_t pad, double rtol,
               const std::string& ctx, uint64_t s, bool per_call) {
  std::mt19937_64 rng(s);
  const int64_t ldx = F + pad, ldy = F + (pad ? 1 : 0);
  auto X = random_matrix<T>(rng, g.cols, ldx);
  std::vector<T> Y(size_t(g.rows * ldy));
  std::vector<float> w;
  if (per_call) {
    std::uniform_real_distribution<float> u(-1.5f, 1.5f);
    for (int64_t k = 0; k < g.nnz(); ++k) w.push_back(u(rng));
  }
  DevGraph<I> dg(g);
  DevBuf dX(X.data(), X.size() * sizeof(T)), dY(nullptr, Y.size() * sizeof(T)),
      dw(w.data(), w.size() * sizeof(float));
  ops::SpmmArgs<I> a{dg.v, per_call ? dw.p : nullptr, DenseView{dX.p, dt, g.cols, F, ldx, dg.v.device},
                     DenseView{dY.p, dt, g.rows, F, ldy, dg.v.device}};
  const auto& var = ops::spmm_registry<I>().get(variant);
  ASSERT_TRUE(var.eligible(a)) << ctx;
  var.run(a, cuda_exec());
  CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
  dY.to_host(Y.data());
  std::vector<double> want, mag;
  loops(g, X, ldx, F, want, mag, per_call ? w.data() : nullptr);
  expect_close(Y, ldy, want, mag, g.rows, F, rtol, ctx + (per_call ? " per-call weights" : ""));
}

template <class I>
void cuda_all() {
  const uint64_t s = seed(23 + sizeof(I));
  int combo = 0;
  for (const auto& [what, g] : cases<I>(s))
    for (int64_t F : {16, 20, 64, 72, 130, 256}) {
      const int64_t pad = (++combo % 3 == 0) ? 3 : 0;  // strided, misaligned rows: element gathers
      const std::string ctx = what + " F=" + std::to_string(F) + " pad=" + std::to_string(pad) +
                              " index=" + index_name(index_of<I>::value) + " seed=" + std::to_string(s);
      // Tolerances relative to sum |w x|: tf32 rounds both operands (2^-11 each), fp16 the tiles and
      // the output (2^-11 each), bf16 likewise with 2^-8.
      const bool per_call = combo % 2 == 0;
      cuda_case<I, float>(g, DType::f32, "cuda.wsb.tf32", F, pad, 2e-3, ctx + " tf32", s + combo, per_call);
      cuda_case<I, half_t>(g, DType::f16, "cuda.wsb.f16", F, pad, 3e-3, ctx + " f16", s + combo, per_call);
      cuda_case<I, bf16_t>(g, DType::bf16, "cuda.wsb.bf16", F, pad, 2e-2, ctx + " bf16", s + combo, per_call);
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace

TEST(SpmmWsbCuda, MatchesLoopsInt32) {
  TESSERA_REQUIRE_CUDA();
  cuda_all<int32_t>();
}
TEST(SpmmWsbCuda, MatchesLoopsInt64) {
  TESSERA_REQUIRE_CUDA();
  cuda_all<int64_t>();
}

TEST(SpmmWsbCuda, CachePerGraphIdentity) {
  TESSERA_REQUIRE_CUDA();
  wsb_device_cache_clear();
  NastyOptions o;
  o.rows = 300, o.cols = 200;
  Csr<int32_t> g = keep_duplicates(nasty_coo<int32_t>(o, seed()));
  {
    DevGraph<int32_t> dg(g);
    const auto first = wsb_prepare_device(dg.v, DType::f16, cuda_exec());
    EXPECT_FALSE(first.cache_hit);
    EXPECT_GT(first.stats.device_bytes(), 0u);
    EXPECT_TRUE(wsb_prepare_device(dg.v, DType::f16, cuda_exec()).cache_hit);
    EXPECT_FALSE(wsb_prepare_device(dg.v, DType::f32, cuda_exec()).cache_hit);  // other tile type
    EXPECT_EQ(wsb_device_cache_size(), 2u);
  }
  g.touch();  // new contents, new identity: never served the old blocks
  DevGraph<int32_t> dg2(g);
  EXPECT_FALSE(wsb_prepare_device(dg2.v, DType::f16, cuda_exec()).cache_hit);
  wsb_device_cache_clear();
  EXPECT_EQ(wsb_device_cache_size(), 0u);
  // Bounded: many graphs never hold more than the capacity.
  for (int i = 0; i < 12; ++i) {
    g.touch();
    DevGraph<int32_t> d(g);
    wsb_prepare_device(d.v, DType::f16, cuda_exec());
  }
  EXPECT_LE(wsb_device_cache_size(), 8u);
}

TEST(SpmmWsbCuda, EligibilityAndErrors) {
  TESSERA_REQUIRE_CUDA();
  NastyOptions o;
  o.rows = 100, o.cols = 100;
  Csr<int32_t> g = keep_duplicates(nasty_coo<int32_t>(o, seed()));
  DevGraph<int32_t> dg(g);
  DevBuf dX(nullptr, 100 * 32 * 2), dY(nullptr, 100 * 32 * 2);
  ops::SpmmArgs<int32_t> a{dg.v, nullptr, DenseView{dX.p, DType::f16, 100, 32, 32, dg.v.device},
                           DenseView{dY.p, DType::f16, 100, 32, 32, dg.v.device}};
  auto& reg = ops::spmm_registry<int32_t>();
  EXPECT_TRUE(reg.get("cuda.wsb.f16").eligible(a));
  EXPECT_FALSE(reg.get("cuda.wsb.bf16").eligible(a));   // dtype
  EXPECT_FALSE(reg.get("cuda.wsb.tf32").eligible(a));
  auto narrow = a;
  narrow.X.cols = narrow.Y.cols = 8;
  EXPECT_FALSE(reg.get("cuda.wsb.f16").eligible(narrow));  // below one n-tile pair
  auto anon = a;
  anon.A.id = 0;
  EXPECT_FALSE(reg.get("cuda.wsb.f16").eligible(anon));    // no identity to cache under
  auto wrong = a;
  wrong.Y.dtype = DType::bf16;
  EXPECT_FALSE(reg.get("cuda.wsb.f16").eligible(wrong));
  EXPECT_THROW(reg.get("cuda.wsb.f16").run(wrong, cuda_exec()), Error);  // forced run names the problem
}
#endif
