#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/core/dtype.hpp"

using namespace tessera;

TEST(DType, HalfRoundTripsRepresentableValues) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
    EXPECT_EQ(float(half_t(f)), f) << f;
  EXPECT_TRUE(std::isinf(float(half_t(70000.0f))));
  EXPECT_TRUE(std::isnan(float(half_t(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float(half_t(1.0f + 1.0f / 4096)), 1.0f);           // ties to even
  EXPECT_EQ(float(half_t(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float(bf16_t(1.0f)), 1.0f);
  EXPECT_EQ(float(bf16_t(3.0f)), 3.0f);
  EXPECT_TRUE(std::isnan(float(bf16_t(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_THROW(parse_dtype("int8"), Error);
}
