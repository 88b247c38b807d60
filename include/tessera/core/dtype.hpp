#pragma once
// Element types. The core stores f16/bf16 as 16-bit words with the IEEE / bfloat16 layouts, so
// the same buffers can be handed to CUDA (__half, __nv_bfloat16) and to torch (Half, BFloat16).
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tessera/core/error.hpp"

namespace tessera {

enum class DType : uint8_t { f32, f64, f16, bf16 };
enum class IndexType : uint8_t { i32, i64 };

struct half_t {
  uint16_t bits = 0;
  half_t() = default;
  half_t(float f);  // NOLINT: implicit like the hardware types
  operator float() const;
};
struct bf16_t {
  uint16_t bits = 0;
  bf16_t() = default;
  bf16_t(float f);  // NOLINT
  operator float() const;
};

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::f16:
    case DType::bf16: return 2;
  }
  return 0;
}
inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
  }
  return "?";
}
DType parse_dtype(std::string_view name);  // "float32"/"f32"/"fp32", ... ; throws on others
inline const char* index_name(IndexType t) { return t == IndexType::i32 ? "int32" : "int64"; }

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<half_t> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bf16_t> { static constexpr DType value = DType::bf16; };
template <class I> struct index_of;
template <> struct index_of<int32_t> { static constexpr IndexType value = IndexType::i32; };
template <> struct index_of<int64_t> { static constexpr IndexType value = IndexType::i64; };

// float <-> half / bfloat16 on the host (round to nearest even; NaN stays NaN).
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16_bits_to_float(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline half_t::half_t(float f) : bits(float_to_half_bits(f)) {}
inline half_t::operator float() const { return half_bits_to_float(bits); }
inline bf16_t::bf16_t(float f) : bits(float_to_bf16_bits(f)) {}
inline bf16_t::operator float() const { return bf16_bits_to_float(bits); }

}  // namespace tessera

// Run a generic lambda-body with T bound to the C++ type of a runtime DType.
#define TESSERA_DISPATCH_FLOAT(dtype, T, ...)                                      \
  [&] {                                                                            \
    switch (dtype) {                                                               \
      case ::tessera::DType::f32: { using T = float; return __VA_ARGS__(); }       \
      case ::tessera::DType::f64: { using T = double; return __VA_ARGS__(); }      \
      case ::tessera::DType::f16: { using T = ::tessera::half_t; return __VA_ARGS__(); } \
      case ::tessera::DType::bf16: { using T = ::tessera::bf16_t; return __VA_ARGS__(); } \
    }                                                                              \
    ::tessera::fail("unsupported dtype");                                          \
  }()

#define TESSERA_DISPATCH_INDEX(itype, I, ...)                                      \
  [&] {                                                                            \
    if ((itype) == ::tessera::IndexType::i32) { using I = int32_t; return __VA_ARGS__(); } \
    using I = int64_t;                                                             \
    return __VA_ARGS__();                                                          \
  }()
