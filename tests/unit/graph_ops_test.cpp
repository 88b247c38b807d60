// validate, transpose, to_coo, convert_index, row_degrees.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "support/testing.hpp"
#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera {
namespace {

template <class I>
Csr<I> random_graph(uint64_t s, int64_t rows, int64_t cols, bool weighted) {
  testing::NastyOptions no;
  no.rows = rows;
  no.cols = cols;
  no.huge_row_degree = std::min<int64_t>(cols, 300);
  no.weighted = weighted;
  return build_csr(testing::nasty_coo<I>(no, s));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

template <class I>
class CsrOpsTest : public ::testing::Test {};
using IndexTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(CsrOpsTest, IndexTypes);

TYPED_TEST(CsrOpsTest, ValidateNamesRowAndEntry) {
  using I = TypeParam;
  Csr<I> g;
  g.rows = 3;
  g.cols = 4;
  g.rowptr = {0, 2, 1, 3};
  g.col = {0, 1, 2};
  EXPECT_EQ(error_of([&] { validate(g.view()); }).rfind("non-monotone offsets at row 1", 0), 0u)
      << error_of([&] { validate(g.view()); });
  g.rowptr = {0, 1, 2, 3};
  g.col = {0, 4, 2};
  EXPECT_EQ(error_of([&] { validate(g.view()); }),
            "index out of range at entry 1 (row 1): column 4 not in [0, 4)");
  g.col = {0, 1, I(-2)};
  EXPECT_NE(error_of([&] { validate(g.view()); }).find("entry 2 (row 2)"), std::string::npos);
  g.col = {0, 1, 2};
  g.rowptr = {0, 1, 2, 2};
  EXPECT_EQ(error_of([&] { validate(g.view()); }).rfind("size mismatch", 0), 0u);
  g.rowptr = {1, 1, 2, 3};
  EXPECT_NE(error_of([&] { validate(g.view()); }).find("rowptr[0] = 1"), std::string::npos);
  g.rowptr = {0, 1, 2, 3};
  g.values = {1, std::nanf(""), 1};
  EXPECT_EQ(error_of([&] { validate(g.view()); }), "NaN weight at entry 1 (row 1, column 1)");
  g.values.clear();
  EXPECT_NO_THROW(validate(g.view()));
}

TYPED_TEST(CsrOpsTest, TransposeTinyByHand) {
  using I = TypeParam;
  // 2 x 3: row 0 = {2 (w 1), 0 (w 2)} unsorted on purpose, row 1 = {1 (w 3)}.
  Csr<I> g;
  g.rows = 2;
  g.cols = 3;
  g.rowptr = {0, 2, 3};
  g.col = {2, 0, 1};
  g.values = {1, 2, 3};
  const Csr<I> t = transpose(g.view());
  EXPECT_EQ(t.rows, 3);
  EXPECT_EQ(t.cols, 2);
  EXPECT_EQ(t.rowptr, (std::vector<I>{0, 1, 2, 3}));
  EXPECT_EQ(t.col, (std::vector<I>{0, 1, 0}));
  EXPECT_EQ(t.values, (std::vector<float>{2, 3, 1}));
}

TYPED_TEST(CsrOpsTest, TransposeTwiceIsIdentity) {
  using I = TypeParam;
  for (int trial = 0; trial < 6; ++trial) {
    const uint64_t s = testing::seed(uint64_t(trial));
    // The last trial is large enough for the parallel paths.
    const int64_t big = trial == 5 ? 20000 : 0;
    const int64_t rows = 1 + big + int64_t(s % 500), cols = 1 + big + int64_t((s >> 20) % 500);
    const Csr<I> g = random_graph<I>(s, rows, cols, trial % 2 == 0);
    const Csr<I> t = transpose(g.view());
    validate(t.view());
    EXPECT_EQ(t.nnz(), g.nnz());
    const Csr<I> tt = transpose(t.view());
    EXPECT_EQ(tt.rows, g.rows);
    EXPECT_EQ(tt.cols, g.cols);
    EXPECT_EQ(tt.rowptr, g.rowptr) << "seed " << s;
    EXPECT_EQ(tt.col, g.col) << "seed " << s;
    EXPECT_EQ(tt.values, g.values) << "seed " << s;
    // Row degrees of the transpose are column counts of g.
    std::vector<int64_t> col_count(size_t(cols), 0);
    for (I c : g.col) ++col_count[size_t(c)];
    EXPECT_EQ(row_degrees(t.view()), col_count);
  }
}

TYPED_TEST(CsrOpsTest, ToCooRoundTrip) {
  using I = TypeParam;
  const uint64_t s = testing::seed();
  const Csr<I> g = random_graph<I>(s, 333, 257, true);
  const Coo<I> c = to_coo(g.view());
  EXPECT_EQ(c.nnz(), g.nnz());
  const Csr<I> back = build_csr(c);
  EXPECT_EQ(back.rowptr, g.rowptr);
  EXPECT_EQ(back.col, g.col);
  EXPECT_EQ(back.values, g.values);
}

TEST(CsrOps, ConvertIndex) {
  const uint64_t s = testing::seed();
  const Csr<int64_t> g = random_graph<int64_t>(s, 100, 120, true);
  const Csr<int32_t> h = convert_index<int32_t>(g);
  EXPECT_EQ(h.rows, 100);
  EXPECT_EQ(std::vector<int64_t>(h.col.begin(), h.col.end()), g.col);
  EXPECT_EQ(h.values, g.values);
  const Csr<int64_t> back = convert_index<int64_t>(h);
  EXPECT_EQ(back.rowptr, g.rowptr);
  Csr<int64_t> big;
  big.rows = 1;
  big.cols = int64_t(1) << 33;  // column ids would not fit int32
  big.rowptr = {0, 1};
  big.col = {int64_t(1) << 32};
  EXPECT_NE(error_of([&] { convert_index<int32_t>(big); }).find("column count 8589934592 does not fit"),
            std::string::npos);
}

TEST(CsrOps, RowDegrees) {
  Csr<int32_t> g;
  g.rows = 4;
  g.cols = 4;
  g.rowptr = {0, 3, 3, 4, 6};
  g.col = {0, 1, 2, 0, 1, 3};
  EXPECT_EQ(row_degrees(g.view()), (std::vector<int64_t>{3, 0, 1, 2}));
}

}  // namespace
}  // namespace tessera
