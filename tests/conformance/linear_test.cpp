// Linear (Y = X W^T + b (+ R)): the reference against hand-checked values, bad input, and every
// CUDA variant against the reference on fresh seeded inputs (sizes that are not multiples of the
// tile, strided rows, K not a multiple of 32, no bias, a residual apart from Y or Y itself). GPU
// cases are named *Cuda*.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda/sm90a/wgmma_layout.hpp"
#include "cuda/waves.hpp"
#include "support/testing.hpp"
#include "tessera/ops/linear.hpp"

#ifdef TESSERA_WITH_CUDA
#include <cuda_runtime.h>

#include "tessera/core/cuda_check.hpp"
#endif

namespace tessera {
namespace {

DenseView view(std::vector<float>& v, int64_t rows, int64_t cols, int64_t ld, Device d = {}) {
  return {v.data(), DType::f32, rows, cols, ld, d};
}

TEST(Linear, ReferenceHandChecked) {
  // X = [[1, 2], [3, 4], [5, 6]], W = [[1, 0], [1, -1]], b = [0.5, -1]
  std::vector<float> x{1, 2, 3, 4, 5, 6}, w{1, 0, 1, -1}, b{0.5f, -1}, y(6, -7);
  ops::LinearArgs a{view(x, 3, 2, 2), view(w, 2, 2, 2), view(y, 3, 2, 2), b.data()};
  ops::linear(a, Exec::cpu());
  EXPECT_EQ(y, (std::vector<float>{1.5f, -2, 3.5f, -2, 5.5f, -2}));
  a.bias = nullptr;  // K = 0: Y = bias or 0
  ops::LinearArgs empty{view(x, 3, 0, 2), view(w, 2, 0, 2), view(y, 3, 2, 2), b.data()};
  ops::linear(empty, Exec::cpu());
  EXPECT_EQ(y, (std::vector<float>{0.5f, -1, 0.5f, -1, 0.5f, -1}));
  // Residual: Y = X W^T + b + R, with R apart and with R = Y (accumulate).
  std::vector<float> r{1, 2, 3, 4, 5, 6};
  a.bias = b.data();
  a.R = view(r, 3, 2, 2);
  ops::linear(a, Exec::cpu());
  EXPECT_EQ(y, (std::vector<float>{2.5f, 0, 6.5f, 2, 10.5f, 4}));
  a.R = a.Y;
  ops::linear(a, Exec::cpu());
  EXPECT_EQ(y, (std::vector<float>{4, -2, 10, 0, 16, 2}));
  // w_transposed: W given K x N, Y = X W. The same W stored transposed gives the first result.
  std::vector<float> wt{1, 1, 0, -1}, y2(6, -7);
  ops::LinearArgs t{view(x, 3, 2, 2), view(wt, 2, 2, 2), view(y2, 3, 2, 2), b.data()};
  t.w_transposed = true;
  ops::linear(t, Exec::cpu());
  EXPECT_EQ(y2, (std::vector<float>{1.5f, -2, 3.5f, -2, 5.5f, -2}));
  // A K x N W with N != K: X (3 x 2) W (2 x 3).
  std::vector<float> w23{1, 0, 2, 0, 1, -1}, y3(9);
  ops::LinearArgs t3{view(x, 3, 2, 2), view(w23, 2, 3, 3), view(y3, 3, 3, 3)};
  t3.w_transposed = true;
  ops::linear(t3, Exec::cpu());
  EXPECT_EQ(y3, (std::vector<float>{1, 2, 0, 3, 4, 2, 5, 6, 4}));
  // Heads: X = [X_0 | X_1] (2 x (2 + 2)), W's rows [W_0; W_1] (one row each, K = 2): Y's column h is
  // X_h W_h^T. With a second input X2 (2 x 1) and W2 (2 x 1) added to both: Y += X2 W2^T.
  std::vector<float> xh{1, 2, 3, 4, 5, 6, 7, 8}, wh{1, 1, 1, -1}, yh(4, -7), x2{1, 2}, w2{10, 100};
  ops::LinearArgs h{view(xh, 2, 4, 4), view(wh, 2, 2, 2), view(yh, 2, 2, 2), b.data()};
  h.blocks = 2;
  ops::linear(h, Exec::cpu());
  EXPECT_EQ(yh, (std::vector<float>{3.5f, -2, 11.5f, -2}));
  h.X2 = view(x2, 2, 1, 1);
  h.W2 = view(w2, 2, 1, 1);
  ops::linear(h, Exec::cpu());
  EXPECT_EQ(yh, (std::vector<float>{13.5f, 98, 31.5f, 198}));
}

TEST(Linear, BadInputNamesTheProblem) {
  std::vector<float> x(12), w(12), y(12);
  auto expect_error = [](const ops::LinearArgs& a, const std::string& part) {
    try {
      ops::linear(a, Exec::cpu());
      ADD_FAILURE() << "no error, expected one containing '" << part << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error({view(x, 3, 4, 4), view(w, 2, 3, 3), view(y, 3, 2, 2)}, "X has 4 columns but W has 3");
  expect_error({view(x, 3, 4, 4), view(w, 2, 4, 4), view(y, 3, 3, 3)}, "Y is 3 x 3 but X W^T is 3 x 2");
  expect_error({view(x, 3, 4, 3), view(w, 2, 4, 4), view(y, 3, 2, 2)}, "leading dimension 3 < 4");
  ops::LinearArgs wt{view(x, 3, 4, 4), view(w, 3, 2, 2), view(y, 3, 2, 2)};
  wt.w_transposed = true;
  expect_error(wt, "X has 4 columns but W (K x N) has 3 rows");
  wt.W = view(w, 4, 3, 3);
  expect_error(wt, "Y is 3 x 2 but X W is 3 x 3");
  expect_error({view(x, 3, 4, 4), view(w, 2, 4, 4), view(x, 3, 2, 2)}, "Y overlaps an input");
  ops::LinearArgs f64{view(x, 3, 4, 4), view(w, 2, 4, 4), view(y, 3, 2, 2)};
  f64.W.dtype = DType::f64;
  expect_error(f64, "one dtype for all");
  std::vector<float> r(12);
  ops::LinearArgs res{view(x, 3, 4, 4), view(w, 2, 4, 4), view(y, 3, 2, 2)};
  res.R = view(r, 2, 2, 2);
  expect_error(res, "residual R is 2 x 2 but Y is 3 x 2");
  res.R = view(y, 3, 2, 2);
  res.R.data = y.data() + 1;
  expect_error(res, "residual R overlaps Y without being Y");
  // Heads and a second input.
  ops::LinearArgs heads{view(x, 2, 5, 5), view(w, 4, 2, 2), view(y, 2, 4, 4)};
  heads.blocks = 3;
  expect_error(heads, "W has 4 rows, not a multiple of the 3 heads");
  heads.blocks = 2;
  expect_error(heads, "X has 5 columns but 2 heads of W's input width 2 need 4");
  heads.blocks = 0;
  expect_error(heads, "blocks (heads) is 0");
  std::vector<float> x2(12), w2(12);
  ops::LinearArgs second{view(x, 3, 4, 4), view(w, 2, 4, 4), view(y, 3, 2, 2)};
  second.X2 = view(x2, 3, 2, 2);
  expect_error(second, "X2 has 2 columns but W2 has 0");
  second.W2 = view(w2, 3, 2, 2);
  expect_error(second, "X2 is 3 x 2 and W2 3 x 2 but X has 3 rows and Y 2 columns");
  second.W2 = view(w2, 2, 2, 2);
  second.w_transposed = true;
  second.W = view(w, 4, 2, 2);
  expect_error(second, "heads and a second input are not for W given K x N");
  // A kept weight split (LinearArgs::w_split): none is read on the CPU, and none is for W given K x N.
  ops::LinearArgs kept{view(x, 3, 4, 4), view(w, 2, 4, 4), view(y, 3, 2, 2)};
  kept.w_split = w.data();
  kept.w_split_bytes = 64;
  expect_error(kept, "the weight split has 64 bytes but W (2 x 4, ");
  expect_error(kept, "needs 0 (no variant reads a split there)");
  kept.w_transposed = true;
  kept.W = view(w, 4, 2, 2);
  expect_error(kept, "a weight split (w_split) is for an N x K weight, not W given K x N");
  EXPECT_EQ(ops::linear_split_weight_bytes(view(w, 2, 4, 4)), 0u);
  try {
    ops::linear_split_weight(view(w, 2, 4, 4), {}, y.data(), 0, Exec::cpu());
    ADD_FAILURE() << "a CPU weight was split";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no variant reads a split of a"), std::string::npos) << e.what();
  }
  try {  // a second weight of other rows is named before anything else
    ops::linear_split_weight(view(w, 2, 4, 4), view(x2, 3, 2, 2), y.data(), 0, Exec::cpu());
    ADD_FAILURE() << "a W2 of other rows was split";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("W2 is 3 x 2 float32 on cpu but W is 2 x 4"), std::string::npos) << e.what();
  }
}

// The wgmma projection's shared tiles (cuda/sm90a/wgmma_layout.hpp), on the CPU: every K value
// of every row is stored where the hardware's 128-byte swizzle reads it, the tiles of one slot
// never overlap, and the descriptor's fields and k-slice steps decode as PTX defines them.
TEST(Linear, WgmmaSharedLayoutIsWhereTheSwizzleReads) {
  namespace wl = cuda::wgmma_layout;
  for (uint32_t base : {0u, 1024u, 37u * 1024u}) {
    std::vector<int> owner(128 * 32, -1);
    for (int r = 0; r < 128; ++r)
      for (int k = 0; k < 32; ++k) {
        const uint32_t stored = base + 4u * uint32_t(wl::chunk_at(r, k / 4) + k % 4);
        const uint32_t read = wl::sw128_read_address(base + 128u * uint32_t(r) + 16u * uint32_t(k / 4)) + 4u * (k % 4);
        ASSERT_EQ(stored, read) << "row " << r << " k " << k << " base " << base;
        int& o = owner[(stored - base) / 4];
        ASSERT_EQ(o, -1) << "two elements at one address: row " << r << " k " << k;
        o = r * 32 + k;
      }
    const uint64_t d = wl::tile_desc(base + 0x20000u);  // shared addresses above 2^17 keep 18 bits
    EXPECT_EQ(d & 0x3FFF, ((base + 0x20000u) & 0x3FFFFu) >> 4);
    EXPECT_EQ((d >> 16) & 0x3FFF, 1u);
    EXPECT_EQ((d >> 32) & 0x3FFF, 1024u >> 4);
    EXPECT_EQ(d >> 62, 1u);
    for (int s = 0; s < 4; ++s)  // k-slice s: the start field moves 32 s bytes, nothing else
      EXPECT_EQ((d + 2 * uint64_t(s)) & 0x3FFF, (((base + 0x20000u) & 0x3FFFFu) + 32u * uint32_t(s)) >> 4);
  }
  // The wgmma wrapper takes only the low half (tile_desc_lo) and the high half as one immediate:
  // that holds if the high half is the same for every tile a kernel can address (up to 227 KB of
  // shared memory), and a k-slice step never carries out of the low half's start field.
  const uint64_t high = wl::tile_desc(0) >> 32;
  for (uint32_t addr = 0; addr < 227u * 1024u; addr += 1024u) {
    ASSERT_EQ(wl::tile_desc(addr) >> 32, high) << "address " << addr;
    ASSERT_EQ(wl::tile_desc_lo(addr), uint32_t(wl::tile_desc(addr)));
    ASSERT_LT((wl::tile_desc_lo(addr) & 0x3FFFu) + 2u * 3u, 0x4000u) << "address " << addr;
  }
}

// dW = dY^T X and db = column sums of dY (LinearGradArgs): hand-checked, and bad input named.
TEST(Linear, WeightGradReferenceHandCheckedAndBadInputNamed) {
  // dY = [[1, 2], [3, 4], [5, 6]] (M = 3, N = 2), X = [[1, 0], [0, 1], [1, 1]] (K = 2)
  std::vector<float> dy{1, 2, 3, 4, 5, 6}, x{1, 0, 0, 1, 1, 1}, dw(4, -7), db(2, -7);
  ops::LinearGradArgs a{view(dy, 3, 2, 2), view(x, 3, 2, 2), view(dw, 2, 2, 2), db.data()};
  ops::linear_weight_grad(a, Exec::cpu());
  EXPECT_EQ(dw, (std::vector<float>{6, 8, 8, 10}));
  EXPECT_EQ(db, (std::vector<float>{9, 12}));
  ops::LinearGradArgs none{view(dy, 0, 2, 2), view(x, 0, 2, 2), view(dw, 2, 2, 2), db.data()};  // M = 0: zeros
  ops::linear_weight_grad(none, Exec::cpu());
  EXPECT_EQ(dw, (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(db, (std::vector<float>{0, 0}));
  auto expect_error = [](const ops::LinearGradArgs& bad, const std::string& what) {
    try {
      ops::linear_weight_grad(bad, Exec::cpu());
      ADD_FAILURE() << "no error for: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  ops::LinearGradArgs rows = a;
  rows.X = view(x, 2, 2, 2);
  expect_error(rows, "dY has 3 rows but X has 2");
  ops::LinearGradArgs shape = a;
  shape.DW = view(dw, 1, 2, 2);
  expect_error(shape, "dW is 1 x 2 but dY^T X is 2 x 2");
  ops::LinearGradArgs alias = a;
  alias.DW = view(dy, 2, 2, 2);
  expect_error(alias, "dW overlaps an input");
}

// The wgmma projection's K order (wgmma_layout::slice_column): every column of a 32-wide step is
// visited once, and lane t's A values for slice s, which it takes from its two float4 chunks
// (2t, 2t + 1: columns 8t + 2s and 8t + 2s + 1), are the columns the split W holds at the
// positions PTX gives lane t in A's fragment (t and t + 4), so A and B pair the same k.
TEST(Linear, WgmmaKOrderPairsTheSameColumns) {
  namespace wl = cuda::wgmma_layout;
  std::vector<int> seen(32, 0);
  for (int s = 0; s < 4; ++s)
    for (int q = 0; q < 8; ++q) {
      const int c = wl::slice_column(s, q);
      ASSERT_TRUE(c >= 0 && c < 32) << s << " " << q;
      ++seen[size_t(c)];
    }
  for (int c = 0; c < 32; ++c) EXPECT_EQ(seen[size_t(c)], 1) << "column " << c;
  for (int t = 0; t < 4; ++t)
    for (int s = 0; s < 4; ++s) {
      EXPECT_EQ(wl::slice_column(s, t), 8 * t + 2 * s);
      EXPECT_EQ(wl::slice_column(s, t + 4), 8 * t + 2 * s + 1);
    }
}

// The weight gradient's row slices (cuda::full_wave_splits): whole waves, never one CTA past a
// wave, and never more slices than the rows allow.
TEST(Linear, WeightGradSlicesFillWholeWaves) {
  using cuda::full_wave_splits;
  const int64_t sms = 132;
  EXPECT_EQ(full_wave_splits(24, sms, 77), 11);   // 264 CTAs: two full waves (6 gave 144: two, one nearly empty)
  EXPECT_EQ(full_wave_splits(16, sms, 77), 8);    // 128 CTAs: one wave; 16 and 24 slices cost the same per row
  EXPECT_EQ(full_wave_splits(8, sms, 77), 16);    // 33 slices would be only 3% cheaper
  EXPECT_EQ(full_wave_splits(12, sms, 4096), 11); // exactly one wave
  EXPECT_EQ(full_wave_splits(2, sms, 4096), 66);
  EXPECT_EQ(full_wave_splits(24, sms, 3), 3);     // short inputs: the rows bound it
  EXPECT_EQ(full_wave_splits(500, sms, 100), 1);  // more tiles than slots: no slicing
  EXPECT_EQ(full_wave_splits(0, 0, 0), 1);
  // The wgmma tile choice's measure (linear_wgmma_preferred): 310 tiles in 264 slots fill 2 waves 59%.
  EXPECT_EQ(cuda::waves_of(310, 264), 2);
  EXPECT_DOUBLE_EQ(cuda::wave_fill(310, 264), 310.0 / 528.0);
  EXPECT_DOUBLE_EQ(cuda::wave_fill(264, 264), 1.0);
  for (int64_t tiles = 1; tiles <= 300; ++tiles)
    for (const int64_t rows_bound : {int64_t(1), int64_t(7), int64_t(77), int64_t(4096)}) {
      const int64_t s = full_wave_splits(tiles, sms, rows_bound);
      ASSERT_GE(s, 1);
      ASSERT_LE(s, rows_bound);
      const int64_t ctas = s * tiles, waves = (ctas + sms - 1) / sms;
      // Unless the rows bound it, one more slice would not fit in the last wave.
      if (s < rows_bound && tiles <= sms) {
        EXPECT_GT(ctas - (waves - 1) * sms, sms - tiles) << tiles << " " << s;
      }
      const double cost = double(waves) / double(s), one = double((tiles + sms - 1) / sms);
      EXPECT_LE(cost, one) << "never slower than one slice: " << tiles;
    }
}

#ifdef TESSERA_WITH_CUDA
struct DeviceFloats {
  float* p = nullptr;
  explicit DeviceFloats(const std::vector<float>& v) {
    if (cudaMalloc(&p, v.size() * sizeof(float) + 16) != cudaSuccess) throw Error("cudaMalloc failed");
    cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~DeviceFloats() { cudaFree(p); }
  std::vector<float> get(size_t n) const {
    std::vector<float> v(n);
    cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost);
    return v;
  }
};

// The tf32x3 kernel's three tiles everywhere; with the sm_90a build on a compute capability 9.0
// device also the two wgmma tiles and the resident one (never silently ineligible there, the resident
// one wherever 1 <= K <= 128).
int expected_cuda_variants(int64_t k) {
#ifdef TESSERA_WITH_WGMMA
  if (cuda_compute_capability(0) == 90) return k >= 1 && k <= 128 ? 6 : 5;
#endif
  return 3;
}
bool is_resident(const std::string& name) { return name == "cuda.wgmma.resident"; }

enum class Residual { none, apart, in_y };

struct Shape {
  int64_t m, n, k, ldx, ldy;
  bool bias;
  Residual residual = Residual::none;
  bool wt = false;  // W stored K x N (LinearArgs::w_transposed)
};

// Y (m x n, row stride ldy) from the GPU against the reference: every element within
// (2^-19 + K 2^-24) mag(i, j), mag the sum of |x w| over the products' K terms plus |b| + |r|, and
// the padding of a strided Y (columns n .. ldy) untouched; the first five failures reported.
struct YShape {
  int64_t m, n, ldy, k;
};
template <class Mag>
void expect_within_bound(const std::vector<float>& got, const std::vector<float>& y0, const std::vector<float>& want,
                         const YShape& y, const std::string& what, Mag mag) {
  int bad = 0;
  for (int64_t i = 0; i < y.m && bad < 5; ++i)
    for (int64_t j = 0; j < y.ldy && bad < 5; ++j) {
      const size_t o = size_t(i * y.ldy + j);
      if (j >= y.n) {
        if (got[o] != y0[o]) ++bad, ADD_FAILURE() << what << ": wrote padding (" << i << ", " << j << ")";
        continue;
      }
      const double m = mag(i, j), err = std::fabs(double(got[o]) - double(want[o]));
      if (!(err <= m * (std::ldexp(1.0, -19) + double(y.k) * std::ldexp(1.0, -24)) + 1e-30))
        ++bad, ADD_FAILURE() << what << ": Y(" << i << ", " << j << ") = " << got[o] << ", reference " << want[o]
                             << ", |err| / sum|x w| = " << err / m;
    }
}

// A variant run again with W's split made beforehand (ops::linear_split_weight, LinearArgs::w_split,
// on compute capability 9.0; the variants that do not read one ignore it): Y bitwise the call's own,
// where the split is for an N x K W. `a` is the call that gave `got`, Y starting from y0 again.
void expect_same_with_kept_split(ops::LinearArgs a, const std::vector<float>& y0, const std::vector<float>& got,
                                 const std::string& variant, const std::string& what) {
  const size_t bytes = ops::linear_split_weight_bytes(a.W, a.has_x2() ? a.W2 : DenseView{});
  if (a.w_transposed || bytes == 0) return;
  DeviceFloats split(std::vector<float>(bytes / sizeof(float)));
  ops::linear_split_weight(a.W, a.has_x2() ? a.W2 : DenseView{}, split.p, bytes, Exec{a.W.device});
  const bool y_is_r = a.R.data == a.Y.data;
  DeviceFloats dy(y0);
  a.Y.data = dy.p;
  if (y_is_r) a.R = a.Y;
  a.w_split = split.p;
  a.w_split_bytes = bytes;
  ops::linear(a, Exec{a.Y.device}, variant);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << variant << " kept split " << what;
  EXPECT_EQ(dy.get(y0.size()), got) << variant << " with a kept split: not the call's own result, " << what;
}

// Every CUDA variant: |y - ref| <= (2^-19 + K 2^-24) (sum_k |x w| + |b| + |r|): the split's product error
// plus fp32 summation's bound over K terms (one tf32 pass, ~2^-12, would fail), and rows/columns outside Y untouched (strided Y keeps its padding).
void check_cuda(const Shape& s, uint64_t salt) {
  std::mt19937 rng(uint32_t(testing::seed(salt)));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(size_t(s.m * s.ldx)), w(size_t(s.n * s.k)), b(size_t(s.n)), y0(size_t(s.m * s.ldy)),
      r(size_t(s.m * s.ldy));
  for (auto* v : {&x, &w, &b, &y0, &r})
    for (auto& e : *v) e = u(rng);
  // in_y: Y starts as the residual (Y += X W^T + b).
  const std::vector<float>& r_vals = s.residual == Residual::in_y ? y0 : r;
  std::vector<float> want = y0;
  // W's N x K entry (j, q), in either layout.
  auto w_at = [&](int64_t j, int64_t q) { return w[size_t(s.wt ? q * s.n + j : j * s.k + q)]; };
  const int64_t w_rows = s.wt ? s.k : s.n, w_cols = s.wt ? s.n : s.k;
  ops::LinearArgs ref{view(x, s.m, s.k, s.ldx), view(w, w_rows, w_cols, w_cols), view(want, s.m, s.n, s.ldy),
                      s.bias ? b.data() : nullptr};
  ref.w_transposed = s.wt;
  if (s.residual == Residual::apart) ref.R = view(r, s.m, s.n, s.ldy);
  if (s.residual == Residual::in_y) ref.R = ref.Y;
  ops::linear(ref, Exec::cpu(), "reference");
  std::vector<double> mag(size_t(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double m = s.bias ? std::fabs(double(b[j])) : 0.0;
      if (s.residual != Residual::none) m += std::fabs(double(r_vals[i * s.ldy + j]));
      for (int64_t q = 0; q < s.k; ++q) m += std::fabs(double(x[i * s.ldx + q]) * double(w_at(j, q)));
      mag[i * s.n + j] = m;
    }
  const Device dev{DeviceKind::cuda, 0};
  const Exec exec{dev};
  DeviceFloats dx(x), dw(w), db(b), dr(r);
  const std::string what = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
                           " ldx=" + std::to_string(s.ldx) + " ldy=" + std::to_string(s.ldy) +
                           (s.bias ? " bias" : "") +
                           (s.residual == Residual::apart ? " residual" : s.residual == Residual::in_y ? " Y+=" : "") +
                           (s.wt ? " W^T" : "") +
                           " seed " + std::to_string(testing::seed(salt));
  int ran = 0;
  for (const auto& v : ops::linear_registry().all()) {
    if (v.backend != tune::Backend::cuda) continue;
    if (v.name.rfind("cuda.wgmma.", 0) == 0 && expected_cuda_variants(s.k) == 3) continue;  // not a 9.0 device
    DeviceFloats dy(y0);
    ops::LinearArgs a{{dx.p, DType::f32, s.m, s.k, s.ldx, dev}, {dw.p, DType::f32, w_rows, w_cols, w_cols, dev},
                      {dy.p, DType::f32, s.m, s.n, s.ldy, dev}, s.bias ? db.p : nullptr};
    a.w_transposed = s.wt;
    if (s.residual == Residual::apart) a.R = {dr.p, DType::f32, s.m, s.n, s.ldy, dev};
    if (s.residual == Residual::in_y) a.R = a.Y;
    if (is_resident(v.name) && s.k > 128) {  // its W n-tile would not fit: refused, not run
      EXPECT_FALSE(ops::linear_registry().is_eligible(v, a, dev)) << v.name << " " << what;
      continue;
    }
    ASSERT_TRUE(ops::linear_registry().is_eligible(v, a, dev)) << v.name << " " << what;
    ops::linear(a, exec, v.name);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << v.name << " " << what;
    ++ran;
    const std::vector<float> got = dy.get(y0.size());
    expect_within_bound(got, y0, want, {s.m, s.n, s.ldy, s.k}, v.name + " " + what,
                        [&](int64_t i, int64_t j) { return mag[size_t(i * s.n + j)]; });
    expect_same_with_kept_split(a, y0, got, v.name, what);
  }
  EXPECT_EQ(ran, expected_cuda_variants(s.k))
      << "the three tf32x3 tiles, and on compute capability 9.0 the two wgmma tiles (and the resident one at K <= 128)";
}

TEST(LinearCuda, EveryVariantMatchesReference) {
  TESSERA_REQUIRE_CUDA();
  const bool small = testing::small_run();
  std::vector<Shape> shapes = {
      {1000, 36, 20, 20, 36, true},    // nothing a multiple of the tile, K < 32
      {517, 130, 68, 68, 130, false},  // N past one 128 tile, K not a multiple of 32
      {33, 2, 4, 4, 2, true},          // smallest eligible N and K
      {300, 256, 260, 264, 258, true}, // strided X and Y
      {129, 1024, 128, 128, 1024, false},
      {1, 64, 64, 64, 64, true},
      {517, 130, 68, 68, 132, true, Residual::apart},  // strided residual and Y
      {300, 64, 36, 36, 64, false, Residual::in_y},    // Y += X W^T (the 128x64 tile too)
      // W stored K x N (a Linear's dX = dY W): N and K past the tiles, strided X and Y, Y +=.
      {1000, 36, 20, 20, 36, true, Residual::none, true},
      {517, 132, 68, 68, 136, false, Residual::apart, true},
      {129, 128, 1024, 1028, 128, false, Residual::in_y, true},
      {33, 4, 4, 4, 4, true, Residual::none, true},
  };
  // Several K steps through the two alternating shared buffers, N past a 128 tile but under two,
  // and W^T with K not a multiple of 32 (the wgmma kernel's own staging).
  shapes.push_back({259, 192, 100, 100, 192, true});
  shapes.push_back({70, 196, 292, 292, 196, true, Residual::apart, true});
  if (!small) shapes.push_back({4099, 200, 300, 300, 200, true});
  // The resident kernel's rounds: several tiles a warpgroup (its X slot refilled, the barrier's phase
  // flipping), a last round without a tile for the second warpgroup, 3 steps of K (the two A
  // buffers unevenly), a residual, W^T.
  shapes.push_back({9000, 384, 96, 100, 388, false, Residual::apart});
  shapes.push_back({3000, 132, 68, 68, 132, true, Residual::none, true});
  if (!small) shapes.push_back({20000, 256, 128, 128, 256, true});
  uint64_t salt = 1;
  for (const auto& s : shapes) check_cuda(s, salt++);
}

// dW = dY^T X (+ db) on the GPU against the reference: |err| <= (2^-19 + M 2^-24) sum_m |dy x| (the
// projection's bound with the sum over M), db within M 2^-24 sum_m |dy|; M not a multiple of the
// 32-row step, N and K past the 128 tiles, strided rows, M split across the machine, M = 0.
TEST(LinearCuda, WeightGradMatchesReference) {
  TESSERA_REQUIRE_CUDA();
#ifndef TESSERA_WITH_WGMMA
  GTEST_SKIP() << "built without sm_90a code: no CUDA weight-gradient variant";
#else
  if (cuda_compute_capability(0) != 90) GTEST_SKIP() << "the weight-gradient kernel needs compute capability 9.0";
  struct G { int64_t m, n, k, ld_dy, ld_x; bool bias; };
  std::vector<G> shapes = {{0, 8, 4, 8, 4, true},        {1, 4, 4, 4, 4, true},
                           {33, 132, 68, 136, 72, true}, {1000, 256, 128, 256, 128, false},
                           {517, 20, 260, 20, 264, true}, {5000, 1536, 128, 1536, 128, true}};
  if (!testing::small_run()) shapes.push_back({70001, 132, 260, 132, 260, true});
  const Device dev{DeviceKind::cuda, 0};
  uint64_t salt = 100;
  for (const G& s : shapes) {
    std::mt19937 rng(uint32_t(testing::seed(salt++)));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> dy(size_t(std::max<int64_t>(1, s.m * s.ld_dy))), x(size_t(std::max<int64_t>(1, s.m * s.ld_x)));
    for (auto* v : {&dy, &x})
      for (auto& e : *v) e = u(rng);
    std::vector<float> want(size_t(s.n * s.k)), want_db(size_t(s.n));
    ops::linear_weight_grad({view(dy, s.m, s.n, s.ld_dy), view(x, s.m, s.k, s.ld_x), view(want, s.n, s.k, s.k),
                             s.bias ? want_db.data() : nullptr},
                            Exec::cpu(), "reference");
    DeviceFloats ddy(dy), dx(x), ddw(std::vector<float>(want.size(), -7.f)), ddb(std::vector<float>(want_db.size(), -7.f));
    const ops::LinearGradArgs a{{ddy.p, DType::f32, s.m, s.n, s.ld_dy, dev},
                                {dx.p, DType::f32, s.m, s.k, s.ld_x, dev},
                                {ddw.p, DType::f32, s.n, s.k, s.k, dev},
                                s.bias ? ddb.p : nullptr};
    ASSERT_TRUE(ops::linear_weight_grad_supported(a, Exec{dev}));
    ops::linear_weight_grad(a, Exec{dev});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = ddw.get(want.size()), got_db = ddb.get(want_db.size());
    const std::string what = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
                             " seed " + std::to_string(testing::seed(salt - 1));
    const double tol = std::ldexp(1.0, -19) + double(s.m) * std::ldexp(1.0, -24);
    int bad = 0;
    for (int64_t n = 0; n < s.n && bad < 5; ++n) {
      for (int64_t k = 0; k < s.k && bad < 5; ++k) {
        double mag = 0;
        for (int64_t m = 0; m < s.m; ++m) mag += std::fabs(double(dy[m * s.ld_dy + n]) * double(x[m * s.ld_x + k]));
        const double err = std::fabs(double(got[n * s.k + k]) - double(want[n * s.k + k]));
        if (!(err <= tol * mag + 1e-30))
          ++bad, ADD_FAILURE() << what << ": dW(" << n << ", " << k << ") = " << got[n * s.k + k] << ", reference "
                               << want[n * s.k + k];
      }
      if (s.bias) {
        double mag = 0;
        for (int64_t m = 0; m < s.m; ++m) mag += std::fabs(double(dy[m * s.ld_dy + n]));
        const double err = std::fabs(double(got_db[n]) - double(want_db[n]));
        if (!(err <= tol * mag + 1e-30))
          ++bad, ADD_FAILURE() << what << ": db(" << n << ") = " << got_db[n] << ", reference " << want_db[n];
      }
    }
  }
#endif
}

// Heads (LinearArgs::blocks) and a second input (X2, W2): the wgmma streaming tiles against the
// reference, within the bound of one product over K + K2; the other variants refuse them. Shapes:
// the folded TransformerConv's (8 heads of K = 128 into C = 128 with a 128-wide skip; 2 x 256),
// K2 not a multiple of a step, several m-tiles past the last one, strided X and Y, a residual,
// heads without a second input and a second input without heads (K not a multiple of 32).
TEST(LinearCuda, HeadsAndSecondInputMatchReference) {
  TESSERA_REQUIRE_CUDA();
  struct H { int64_t m, heads, k, nb, k2, ldx, ldy; bool bias, residual; };
  std::vector<H> shapes = {{3000, 8, 128, 128, 128, 1024, 1024, true, false},
                           {517, 2, 128, 256, 36, 260, 516, true, true},
                           {129, 3, 32, 128, 0, 96, 384, false, false},
                           {70, 1, 68, 132, 20, 68, 132, true, false}};
  if (!testing::small_run()) shapes.push_back({20000, 2, 64, 128, 256, 128, 256, true, false});
  const Device dev{DeviceKind::cuda, 0};
  uint64_t salt = 200;
  for (const H& s : shapes) {
    std::mt19937 rng(uint32_t(testing::seed(salt++)));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const int64_t n = s.heads * s.nb;
    std::vector<float> x(size_t(s.m * s.ldx)), w(size_t(n * s.k)), x2(size_t(std::max<int64_t>(1, s.m * s.k2))),
        w2(size_t(std::max<int64_t>(1, n * s.k2))), b(static_cast<size_t>(n)), y0(static_cast<size_t>(s.m * s.ldy));
    for (auto* v : {&x, &w, &x2, &w2, &b, &y0})
      for (auto& e : *v) e = u(rng);
    auto args = [&](void* px, void* pw, void* px2, void* pw2, void* pb, void* py, Device d) {
      ops::LinearArgs a{{px, DType::f32, s.m, s.heads * s.k, s.ldx, d}, {pw, DType::f32, n, s.k, s.k, d},
                        {py, DType::f32, s.m, n, s.ldy, d}, s.bias ? pb : nullptr};
      a.blocks = s.heads;
      if (s.k2 > 0) {
        a.X2 = {px2, DType::f32, s.m, s.k2, s.k2, d};
        a.W2 = {pw2, DType::f32, n, s.k2, s.k2, d};
      }
      if (s.residual) a.R = a.Y;
      return a;
    };
    std::vector<float> want = y0;
    ops::linear(args(x.data(), w.data(), x2.data(), w2.data(), b.data(), want.data(), {}), Exec::cpu(), "reference");
    DeviceFloats dx(x), dw(w), dx2(x2), dw2(w2), db(b);
    const std::string what = "M=" + std::to_string(s.m) + " heads=" + std::to_string(s.heads) + " K=" +
                             std::to_string(s.k) + " N/heads=" + std::to_string(s.nb) + " K2=" + std::to_string(s.k2) +
                             " seed " + std::to_string(testing::seed(salt - 1));
    int ran = 0;
    for (const auto& v : ops::linear_registry().all()) {
      if (v.backend != tune::Backend::cuda) continue;
      DeviceFloats dy(y0);
      const ops::LinearArgs a = args(dx.p, dw.p, dx2.p, dw2.p, db.p, dy.p, dev);
      const bool streaming = v.name == "cuda.wgmma.128x128" || v.name == "cuda.wgmma.64x128";
      const bool eligible = streaming && expected_cuda_variants(s.k) > 3 && (s.heads == 1 || s.k % 32 == 0);
      ASSERT_EQ(ops::linear_registry().is_eligible(v, a, dev), eligible) << v.name << " " << what;
      if (!eligible) continue;
      ops::linear(a, Exec{dev}, v.name);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << v.name << " " << what;
      ++ran;
      const std::vector<float> got = dy.get(y0.size());
      expect_same_with_kept_split(a, y0, got, v.name, what);
      // sum |x w| over the head's block of X and over X2, + |b| + |r|.
      expect_within_bound(got, y0, want, {s.m, n, s.ldy, s.k + s.k2}, v.name + " " + what,
                          [&](int64_t i, int64_t j) {
                            double mag = (s.bias ? std::fabs(double(b[j])) : 0.0) +
                                         (s.residual ? std::fabs(double(y0[size_t(i * s.ldy + j)])) : 0.0);
                            const int64_t x0 = (j / s.nb) * s.k;
                            for (int64_t q = 0; q < s.k; ++q)
                              mag += std::fabs(double(x[i * s.ldx + x0 + q]) * double(w[j * s.k + q]));
                            for (int64_t q = 0; q < s.k2; ++q)
                              mag += std::fabs(double(x2[i * s.k2 + q]) * double(w2[j * s.k2 + q]));
                            return mag;
                          });
    }
    EXPECT_EQ(ran, expected_cuda_variants(s.k) > 3 ? 2 : 0) << "the two wgmma streaming tiles, on compute capability 9.0";
    DeviceFloats dy(y0);
    EXPECT_EQ(ops::linear_supported(args(dx.p, dw.p, dx2.p, dw2.p, db.p, dy.p, dev), Exec{dev}), ran > 0) << what;
  }
}

TEST(LinearCuda, IneligibleShapesAreRefusedNotRounded) {
  TESSERA_REQUIRE_CUDA();
  const Device dev{DeviceKind::cuda, 0};
  std::vector<float> host(64 * 8, 1.f);
  DeviceFloats d(host);
  // K = 6 (not a multiple of 4): no variant, and a forced one is refused with the reason.
  ops::LinearArgs a{{d.p, DType::f32, 8, 6, 6, dev}, {d.p, DType::f32, 4, 6, 6, dev}, {d.p + 256, DType::f32, 8, 4, 4, dev}};
  EXPECT_FALSE(ops::linear_supported(a, Exec{dev}));
  try {
    ops::linear(a, Exec{dev}, "cuda.tf32x3.128x128");
    ADD_FAILURE() << "an ineligible forced variant ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run these arguments"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
}  // namespace tessera
