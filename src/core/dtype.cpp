#include "tessera/core/dtype.hpp"

#include <cmath>
#include <string>

namespace tessera {

uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or NaN (keep NaN quiet and non-zero)
    return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504: inf
  if (absx < 0x38800000u) {  // subnormal half (or zero): scale into integer and round
    float a;
    std::memcpy(&a, &absx, 4);
    const float scaled = a * 16777216.0f;  // 2^24: half subnormal unit
    const uint32_t m = uint32_t(std::nearbyint(scaled));
    return uint16_t(sign | m);
  }
  uint32_t mant = absx & 0x7fffffu;
  int32_t exp = int32_t(absx >> 23) - 127 + 15;
  uint32_t h = (uint32_t(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // round to nearest even
  return uint16_t(sign | h);
}

float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal
      float f = std::ldexp(float(mant), -24);
      std::memcpy(&out, &f, 4);
      out |= sign;
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

DType parse_dtype(std::string_view name) {
  const std::string n(name);
  if (n == "float32" || n == "f32" || n == "fp32" || n == "float") return DType::f32;
  if (n == "float64" || n == "f64" || n == "fp64" || n == "double") return DType::f64;
  if (n == "float16" || n == "f16" || n == "fp16" || n == "half") return DType::f16;
  if (n == "bfloat16" || n == "bf16") return DType::bf16;
  fail("unknown dtype '", n, "' (expected float32, float64, float16 or bfloat16)");
}

}  // namespace tessera
